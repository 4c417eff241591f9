"""The draft model: a small network trained by this repository from the target model itself (which stays frozen).

Stages, one module each: ``instructions`` (the chat prompts we wrote), ``data`` (the target's own answers and
its next-token choices over text on this machine: self-distillation), ``heads`` (the draft designs),
``train`` (fitting a design to the data), ``simulate`` (acceptance per draft position, measured offline on
held-out prompts). References: EAGLE (Li et al., 2024), Medusa (Cai et al., 2024).
"""

"""All at once: one pass over a text gives the model's prediction after every position.

The causal mask lets a position see itself and earlier positions only, so the
prediction after " is" in "The capital of France is" is the same whether or not
anything follows it in the pass. And the pass costs about as much as one
token's: the parameters are fetched from memory once and reused for every
position. Training scores every position of a known text this way (teacher
forcing); verification brings the same view into answering.

Reference: Vaswani et al., "Attention Is All You Need" (2017), masked
self-attention in the decoder.
"""

from .contract import Predictions
from .seam import Model


async def all_at_once(model: Model, ids: list[int]) -> Predictions:
    """One pass over ``ids``, from an empty session."""
    if not ids:
        raise ValueError("the text is empty: a pass needs at least one token")
    result = await model.session(kv_cache=True).forward(ids)
    return Predictions(ids=list(ids), argmax=result.argmax, topk_ids=result.topk_ids, topk_probs=result.topk_probs,
                       seconds=result.seconds)

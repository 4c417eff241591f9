"""One word table: the model's input lookup and its output layer read the same matrix.

Qwen2.5's small models tie their two word tables: the row that turns token t
into numbers is the row that scores token t as the next one. The default GGUF
nonetheless stores the table twice, quantised two ways (``token_embd.weight``
as Q5_0, ``output.weight`` as Q8_0); dequantised, their rows agree to a cosine
of 0.998 at worst. Shipping both cost 136 M parameters (the whole vocabulary
times the hidden size) in the file and in the tab's memory.

``tie_word_tables`` makes the loaded model use one copy, the better-quantised
output table, for both, before anything is exported: the float32 reference
the int8 model is compared with is then this tied model. It ties only tables
that are one table already (every row's cosine at least ``SAME_TABLE_COSINE``);
a model whose tables differ keeps both. The int8 graph then stores the table
once (``quantize.py``: the lookup reads a token's column of the output layer's
int8 weights).
"""

import torch

# Rows of two copies of one table, quantised differently, agree to 0.998 at worst; two trained tables do not.
SAME_TABLE_COSINE = 0.99


def tie_word_tables(model) -> dict:
    """Tie ``model``'s word tables in place where they are one table; returns what was found, for the manifest."""
    inputs, outputs = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    if inputs is outputs:
        return {"tables": 1, "tied_by": "the source"}
    with torch.no_grad():
        cosine = torch.nn.functional.cosine_similarity(inputs, outputs, dim=1)
    found = {"row_cosine_min": round(float(cosine.min()), 4), "row_cosine_median": round(float(cosine.median()), 4)}
    if found["row_cosine_min"] < SAME_TABLE_COSINE:
        return {"tables": 2, **found}
    # The output table, not the input one: in the default GGUF it is the better-quantised copy (Q8_0 against Q5_0).
    model.get_input_embeddings().weight = outputs
    model.config.tie_word_embeddings = True
    return {"tables": 1, "tied_by": "the exporter, from the output table", **found}

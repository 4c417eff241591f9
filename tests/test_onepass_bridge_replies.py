"""The browser backend holds the bridge's replies to the contract's typed dicts (contract.BridgePass,
BridgeDraftStep): a reply with a key missing or unknown fails at once, by name."""

import pytest

from onepass.backends.browser import checked
from onepass.contract import BridgeDraftStep, BridgePass

PASS = {"argmax": [7], "topkIds": [7, 3], "topkProbs": [0.9, 0.1], "k": 2, "seconds": 0.01, "kvSeconds": 0.001}
STEP = {"feature": [0.5, -0.5], "token": 7, "seconds": 0.001, "confidence": 0.4}


def test_a_reply_with_the_contracts_keys_is_read_as_it_came():
    assert checked(PASS, BridgePass) == PASS
    assert checked({**PASS, "vocab": 2, "logits": [0.0, 1.0]}, BridgePass)["vocab"] == 2
    assert checked({**STEP, "ids": [7], "probs": [1.0]}, BridgeDraftStep)["ids"] == [7]


def test_a_reply_missing_a_key_or_with_one_the_contract_lacks_fails_by_name():
    with pytest.raises(TypeError, match="kvSeconds"):
        checked({key: value for key, value in PASS.items() if key != "kvSeconds"}, BridgePass)
    with pytest.raises(TypeError, match="kv_seconds"):
        checked({**PASS, "kv_seconds": 0.001}, BridgePass)
    with pytest.raises(TypeError, match="token"):
        checked({"feature": [0.5], "seconds": 0.001}, BridgeDraftStep)

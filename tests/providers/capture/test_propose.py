"""Which element an entry that matches nothing most likely meant, and selectors for it
(bridge.providers.capture.propose)."""

from __future__ import annotations

from typing import Any

from bridge.providers.capture.propose import candidates, selectors_for, subject


def test_the_subject_compound_of_a_selector() -> None:
    found = subject(
        'form[data-type="unified-composer"] > button[data-testid="send-button"]:not([disabled])'
    )
    assert found.tag == "button"
    assert found.attributes == (("data-testid", "send-button"),)
    assert subject("#composer-submit-button.a.b").id == "composer-submit-button"
    assert subject("#composer-submit-button.a.b").classes == ("a", "b")
    assert subject("[data-testid^='conversation-turn-']").attributes == (
        ("data-testid", "conversation-turn-"),
    )


def _node(i: int, tag: str, attrs: dict[str, str]) -> dict[str, Any]:
    return {"i": i, "p": -1, "tag": tag, "attrs": attrs, "text": []}


NODES = [
    _node(0, "button", {"data-testid": "composer-speech-button", "aria-label": "Start voice mode"}),
    _node(1, "button", {"aria-label": "Dictate", "class": "composer-btn"}),
    _node(
        2,
        "button",
        {
            "id": "composer-submit-button",
            "data-testid": "composer-submit-button",
            "aria-label": "Send prompt",
            "class": "composer-submit-btn wcDTda_x",
        },
    ),
    _node(3, "div", {"data-testid": "send-button-container"}),
]


def test_the_renamed_send_button_is_found_by_its_words_and_its_label() -> None:
    found = candidates(
        NODES, ['button[data-testid="send-button"]'], ["Send prompt", "Send message"]
    )
    assert found[0] == 2


def test_nothing_is_proposed_for_an_element_that_shares_only_its_tag() -> None:
    assert candidates(NODES, ["section.nothing-alike"], []) == []


def test_selectors_use_the_entrys_own_attributes_first_then_stable_ones() -> None:
    proposals = selectors_for(NODES[2], ['button[data-testid="send-button"]'])
    assert proposals == [
        'button[data-testid="composer-submit-button"]',
        "button#composer-submit-button",
        'button[aria-label="Send prompt"]',
        "button.composer-submit-btn",
    ]


def test_a_placeholder_or_an_id_is_never_proposed() -> None:
    node = _node(0, "button", {"aria-label": "xxxxxxx", "data-testid": ":id", "id": ":id"})
    assert selectors_for(node) == []


def test_the_first_proposal_is_the_entrys_selector_with_the_elements_values() -> None:
    node = _node(0, "div", {"id": "prompt-textarea", "contenteditable": "true", "role": "textbox"})
    proposals = selectors_for(node, ['div#prompt-input[contenteditable="true"]:not([hidden])'])
    assert proposals[0] == 'div#prompt-textarea[contenteditable="true"]'

"""A failure's evidence in the report's form: screenshots as base64, DOMs as excerpts."""

from __future__ import annotations

import base64

from bridge.scenarios.evidence import Evidence, dom_excerpt, evidence_record, image_kind

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_the_excerpt_is_the_body_without_code_styles_or_icons() -> None:
    shadow = "<template shadowrootmode='open'><b>x</b></template>"  # a shadow root: kept
    page = (
        "<html><head><title>t</title><style>p{}</style></head><body><p>turn 1</p>"
        f"<script>var secret = 1;</script><svg><path d='M0'/></svg>{shadow}<p>turn 2</p>"
        "</body></html>"
    )
    assert dom_excerpt(page) == f"<body><p>turn 1</p>{shadow}<p>turn 2</p></body></html>"


def test_a_long_body_keeps_its_end_and_says_how_much_was_cut() -> None:
    page = "<body>" + "".join(f"<p>turn {i}</p>" for i in range(1000)) + "</body>"
    excerpt = dom_excerpt(page, limit=100)
    assert excerpt.endswith("<p>turn 999</p></body>")
    head, _, kept = excerpt.partition("\n")
    assert len(kept) == 100
    assert head == f"<!-- {len(page) - 100} characters before this excerpt -->"


def test_records_are_json_ready_with_the_image_kind_from_its_bytes() -> None:
    assert image_kind(JPEG) == "jpeg" and image_kind(PNG) == "png"
    record = evidence_record(
        [
            Evidence("chatgpt tab 3 screenshot", JPEG, "jpeg"),
            Evidence("chatgpt tab 3 DOM", "<body><script>x</script><p>hi</p></body>", "html"),
            Evidence("gemini tab 4 evidence", "could not capture: tab closed", "text"),
        ]
    )
    assert record[0] == {
        "name": "chatgpt tab 3 screenshot",
        "kind": "jpeg",
        "data": base64.b64encode(JPEG).decode(),
    }
    assert record[1] == {
        "name": "chatgpt tab 3 DOM excerpt",
        "kind": "html",
        "text": "<body><p>hi</p></body>",
    }
    assert record[2]["text"] == "could not capture: tab closed"

"""Faithful fake ChatGPT and Gemini sites, served locally at their real URLs.

``FakeSites`` serves both on one loopback HTTPS port; a Chromium started with its
``chromium_args()`` loads them at ``https://chatgpt.com/`` and ``https://gemini.google.com/app``.
Each site's controller sets how the next questions are answered and records what happened.
Run ``python -m bridge.fakes`` to explore them in a browser.
"""

from bridge.fakes.behaviour import Behaviour, answer_lines, answer_markdown
from bridge.fakes.controller import Exchange, QuestionRecord, SiteController
from bridge.fakes.server import CHATGPT_URL, GEMINI_URL, FakeSites

__all__ = [
    "CHATGPT_URL",
    "GEMINI_URL",
    "Behaviour",
    "Exchange",
    "FakeSites",
    "QuestionRecord",
    "SiteController",
    "answer_lines",
    "answer_markdown",
]

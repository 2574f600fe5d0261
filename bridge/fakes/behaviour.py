"""What a fake site does for a question: the settings, and the deterministic answer text.

The answers are realistic texts, not built from the question's words: each question gets the
answer of the corpus (``bridge/fakes/corpus``) that fits it best, so a scenario's relevance
check measures something, and ``Behaviour(off_topic=True)`` gets a fluent answer about
something else, which that check must catch. Deterministic (no clock, no randomness) so the
answers can be asserted exactly: the same question and settings always give the same
markdown, and :func:`answer_lines` says which lines of text a reader of the rendered page sees.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from bridge.fakes.corpus import CorpusAnswer, corpus

__all__ = [
    "DEEP_THINK_PLACEHOLDER",
    "Behaviour",
    "DeepThinkOffer",
    "InputKind",
    "Length",
    "Locale",
    "Markup",
    "ResearchOffer",
    "ResearchStart",
    "State",
    "answer_lines",
    "answer_markdown",
    "asks_for_code",
    "chosen_answer",
    "keywords",
]

State = Literal[
    "ok", "logged_out", "rate_limited", "error_turn", "stuck", "challenge", "no_request", "rollback"
]
Locale = Literal["en", "ja", "de"]
InputKind = Literal["prosemirror", "textarea"]
Markup = Literal["current", "newest"]
SendMarkup = Literal["current", "submit"]
Length = Literal["short", "long"]
DeepThinkOffer = Literal["offered", "absent", "disabled"]
DownloadOutcome = Literal["ok", "refused", "forbidden"]
ResearchOffer = Literal["absent", "offered", "disabled"]
ResearchStart = Literal["button", "countdown"]

#: The fake's Deep Think placeholder reply: the fragments G10.2 quotes ("I'm on it",
#: "check back later", "generating your response") in a wording of the fake's own.
DEEP_THINK_PLACEHOLDER = (
    "I'm on it. Responses with Deep Think can take some time, so check back later. "
    "Generating your response…"
)

_STATES = (
    "ok",
    "logged_out",
    "rate_limited",
    "error_turn",
    "stuck",
    "challenge",
    "no_request",
    "rollback",
)
_LOCALES = ("en", "ja", "de")
_INPUT_KINDS = ("prosemirror", "textarea")
_MARKUPS = ("current", "newest")
_SEND_MARKUPS = ("current", "submit")
_LENGTHS = ("short", "long")
_DEEP_THINK_OFFERS = ("offered", "absent", "disabled")
_DOWNLOADS = ("ok", "refused", "forbidden")
_RESEARCH_OFFERS = ("absent", "offered", "disabled")
_RESEARCH_STARTS = ("button", "countdown")


@dataclass(frozen=True)
class Behaviour:
    """How a fake site behaves, for the page as a whole or for one question.

    The defaults keep a test suite fast: an answer of a kilobyte streamed in about a quarter of
    a second, no thinking phase, no hydration delay. ``locale``, ``input_kind``,
    ``hydration_ms`` and the ``logged_out`` state are read by the page when it loads (from the
    site's default behaviour); the other fields drive each answer (from the queue, else the
    default).
    """

    answer: str | None = None
    """Exact markdown to answer with; ``None`` chooses a corpus answer for the question."""
    off_topic: bool = False
    """Answer with a realistic text about something else (the corpus answer sharing the fewest
    of the question's words), as a site that misunderstood would: what a scenario's relevance
    check must catch."""
    length: Length = "short"
    """``"long"`` adds tens of kilobytes to the chosen answer."""
    chunk_chars: int = 64
    """Characters per streamed chunk (the site's "token"; several of the real sites' tokens,
    so that a realistic answer of a kilobyte streams in about a quarter of a second)."""
    chunk_interval_ms: int = 15
    """Pause between chunks, i.e. the streaming speed."""
    duration_ms: int | None = None
    """How long the answer streams, in site time: its chunks spread evenly over it instead of
    ``chunk_interval_ms`` apart. ``duration_ms=180_000`` is a three-minute answer; a site's
    ``time_scale`` (:class:`~bridge.fakes.SiteController`) makes it take a fraction of that."""
    thinking_ms: int = 0
    """ChatGPT's Thinking phase before the answer streams; 0 means no thinking phase."""
    hydration_ms: int = 0
    """How long after load the composer appears."""
    state: State = "ok"
    """``ok`` answers. ``logged_out`` (read at page load): ChatGPT keeps its composer (guest mode)
    and shows "Log in" / "Sign up for free"; Gemini shows a "Sign in" link instead of the input;
    as a queued behaviour the site refuses the question with 401. ``rate_limited``: ChatGPT's
    send gets HTTP 429 and the page shows its limit dialog; Gemini's stream carries wire error
    1037 and the page shows the limit as the model's reply. ``error_turn``: "Something went
    wrong" as the answer's own text (ChatGPT adds a regenerate button). ``stuck``: the first
    chunk streams, then nothing:
    the stop button stays and the answer never completes; Gemini's hung UI also ignores Stop.
    ``challenge``: Cloudflare's "Just a moment…" interstitial instead of the site (read at page
    load; docs/sites.md#challenge: documented for ChatGPT only, served by both fakes alike).
    ``no_request`` (read at page load): Send puts the question on the page as a user turn but
    the page never makes its answer request, so nothing is asked and nothing answers (the
    fakes' own: docs/sites.md#facts-without-evidence). ``rollback`` (Gemini): the server
    refuses the question; about a second after Send the new ``user-query`` vanishes and the
    text returns to the editor, and nothing is answered (SITE-FACTS G14.2)."""
    locale: Locale = "en"
    """The UI language. ``de`` changes only the texts with evidence (ChatGPT's limit sentence
    with "Nutzungslimit", "Erneut versuchen"); the rest stays English."""
    input_kind: InputKind = "prosemirror"
    """ChatGPT's input: a ProseMirror-style contenteditable, or a plain textarea."""
    markup: Markup = "current"
    """ChatGPT's message attribute (read at page load): ``current`` is
    ``data-message-author-role`` [C2.3]; ``newest`` is ``data-message-role``, the markup
    seen in late September 2026 [C2.10]: a site change as the packs must absorb it
    (an override in the state directory, no release; docs/sites.md#provider-packs)."""
    send_markup: SendMarkup = "current"
    """ChatGPT's send button (read at page load): ``current`` is
    ``data-testid="send-button"`` [C1.5]; ``submit`` is ``data-testid="composer-submit-button"``,
    the test id one source selects the same slot by [C1.5: BLM]: a site change the built-in
    pack does not know, for checking that a capture of it names the entry and proposes the
    selector that matches (docs/captures.md)."""
    mode_sticks: bool = True
    """Whether a choice in the site's mode picker takes (read at page load). ``False`` is a
    picker whose choice does not hold (a mode the account may not use): the menu closes and
    the mode stays as it was, so a driver must look, not trust its own click. The same holds
    for ChatGPT's effort tiers and Gemini's Deep Think (docs/sites.md#effort)."""
    effort_disabled: str = ""
    """ChatGPT only (read at page load): the effort tier, by its label in the Effort submenu
    (e.g. ``"Pro"``), shown disabled (``aria-disabled``) with a row-owned notice carrying a
    reset time, as an exhausted Pro allotment shows (SITE-FACTS C13.5)."""
    upload_ms: int = 0
    """How long the fake server takes to accept each uploaded file (``POST /__fake/upload``),
    read from the default behaviour: the time a page shows the file as uploading."""
    upload_consent: bool = False
    """Gemini only (read at page load): the profile's first upload asks consent first
    ("Creating content from images and files", Cancel/Agree, SITE-FACTS G5.3) and opens no
    file chooser until Agree, which the page remembers in its localStorage."""

    deep_think: DeepThinkOffer = "offered"
    """Gemini only (read at page load): whether the Tools menu offers Deep Think (G10.1).
    ``absent``: no such item (the other tools stay); ``disabled``: the item is shown
    ``aria-disabled``. How the real site withholds it is not documented: these are the fake's
    own stand-ins for an account without it (docs/sites.md#facts-without-evidence)."""
    deep_think_placeholder_ms: int = 600
    """Gemini only: with Deep Think on, how long (site time) the placeholder reply
    (:data:`DEEP_THINK_PLACEHOLDER`, G10.2) shows, finished-looking, before the answer
    replaces it."""

    temporary_chat: bool = True
    """Whether the account may use temporary chats (read at page load). ``False``: ChatGPT's
    ``/?temporary-chat=true`` (SITE-FACTS C6.3) lands on ``/`` without the parameter, and
    Gemini shows no temporary-chat button (G13.1). How the real sites refuse one is not
    documented: these are the fakes' own (docs/sites.md#facts-without-evidence)."""

    side_nav_collapsed: bool = False
    """Gemini only (read at page load): the side navigation starts collapsed, so the
    temporary-chat button is not in the DOM until the nav's menu button
    (``side-nav-menu-button``) expands it (G13.1)."""

    image: bool = False
    """The answer comes with a generated image (docs/sites.md#outputs). ChatGPT: a "Processing
    image" tool message first (SITE-FACTS C10.3) shows the loading skeleton (C10.2), which
    stays after the stream has ended and the stop button has gone; ``image_ms`` later the
    conversation read carries the ``image_asset_pointer`` (C10.4) and the page shows the
    image at its estuary URL (C10.5), a blurred and a sharp copy of one file."""
    image_ms: int = 300
    """ChatGPT: how long (site time) the skeleton outlives the answer's stream (C10.2)."""
    files: tuple[str, ...] = ()
    """ChatGPT: names of files the answer generated, linked as ``sandbox:/mnt/data/<name>``
    (C11.1) and rendered as ``button.behavior-btn`` (C11.2). A name may be hostile
    (``../../x``): the site's names are input to bridge, never paths."""
    download: DownloadOutcome = "ok"
    """ChatGPT: how the site answers a generated file's or image's download. ``refused``: the
    interpreter download answers ``{status: "error", error_code, error_message}`` (the shape
    C10.6 gives the files API; C11.3's error body is undocumented) and the image's estuary
    URL 403; ``forbidden``: the signed ``download_url`` answers 403 (U80: estuary needs
    authentication)."""
    research: ResearchOffer = "absent"
    """Read at page load: Deep Research offered (docs/sites.md#research). ChatGPT: in the
    composer "+" menu (SITE-FACTS C9.1); ``absent`` (the default) keeps the "+" opening the
    file chooser at once, as it always did in the fake; ``offered`` makes it open a menu with
    "Deep research" (and the fake's own "Add photos & files" item); ``disabled`` shows the
    item ``aria-disabled``. Gemini: the Tools menu's "Deep Research" item (G11.1) turns on
    its chip when ``offered``, is ``aria-disabled`` when ``disabled``, and stays inert when
    ``absent``. How an account without it looks is not documented: these are the fakes' own
    stand-ins (docs/sites.md#facts-without-evidence)."""
    research_clarify: bool = False
    """ChatGPT: the first Deep Research question of a conversation is answered with
    clarifying questions, an ordinary finished assistant turn (C9.5); the next question
    (the person's answers) gets the plan."""
    research_start: ResearchStart = "button"
    """ChatGPT: how the research plan starts (C9.6, contested): ``button``, a "Start"
    control the person must press (PDX); ``countdown``: it starts by itself after
    ``research_countdown_ms`` (OR)."""
    research_countdown_ms: int = 1500
    """ChatGPT: the plan's countdown before the research starts by itself (site time; the
    real one is about 60 s, C9.6)."""
    research_ms: int = 1000
    """ChatGPT: how long the research runs from its start to the completed report (site
    time; the real one takes minutes, C9.12)."""

    def __post_init__(self) -> None:
        _check_choice("state", self.state, _STATES)
        _check_choice("research", self.research, _RESEARCH_OFFERS)
        _check_choice("research_start", self.research_start, _RESEARCH_STARTS)
        _check_choice("locale", self.locale, _LOCALES)
        _check_choice("input_kind", self.input_kind, _INPUT_KINDS)
        _check_choice("markup", self.markup, _MARKUPS)
        _check_choice("send_markup", self.send_markup, _SEND_MARKUPS)
        _check_choice("length", self.length, _LENGTHS)
        _check_choice("deep_think", self.deep_think, _DEEP_THINK_OFFERS)
        _check_choice("download", self.download, _DOWNLOADS)
        if not isinstance(self.files, tuple):
            object.__setattr__(self, "files", tuple(self.files))
        if self.upload_ms < 0:
            raise ValueError(f"upload_ms must not be negative, not {self.upload_ms}")
        if self.chunk_chars < 1:
            raise ValueError(f"chunk_chars must be at least 1, not {self.chunk_chars}")
        for name in (
            "chunk_interval_ms",
            "thinking_ms",
            "hydration_ms",
            "deep_think_placeholder_ms",
            "image_ms",
            "research_countdown_ms",
            "research_ms",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ValueError(f"duration_ms must not be negative, not {self.duration_ms}")

    def chunk_pause_ms(self, answer_chars: int) -> float:
        """The pause before each chunk of an answer ``answer_chars`` long, in site time: the
        chunk interval, or ``duration_ms`` shared out over the chunks."""
        if self.duration_ms is None:
            return float(self.chunk_interval_ms)
        count = max(1, -(-answer_chars // self.chunk_chars))
        return self.duration_ms / count


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")


_STOPWORD_TEXT = """
a an and are about any can could does explain for from give how into is it its me my of on
or please show tell than that the their them then there these this those to use using was
what when where which who why will with would write you your in be do by as at if so not
but all also some more most very just like make between after before over under each
every other has have had been being were should shall may might must
one way sentence briefly brief answer include including short example examples detail
depth
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Japanese has no spaces: runs of katakana and kanji are its content words, hiragana is mostly
# grammar (particles, endings), so it separates them.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+#-]*|[\u30a0-\u30ff\u3400-\u9fff]{2,}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_ANY_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+|[\u30a0-\u30ff\u3400-\u9fff]{2,}")
_CODE_WORDS = re.compile(
    r"\b(code|function|implement\w*|script|program|snippet|class|regex|algorithm)\b"
    r"|コード|関数|実装|プログラム|スクリプト",
    re.IGNORECASE,
)
_MAX_KEYWORDS = 8
# The corpus's generated long answers (tens of kB), by the question's language.
_LONG = {False: "45-long-engineering-handbook", True: "46-long-japanese-handbook"}
#: An off-topic answer is a real one: long enough that only its topic can fail it.
_OFF_TOPIC_MIN_CHARS = 300


def keywords(question: str) -> list[str]:
    """The question's content words, in order, without repeats (what an answer is chosen by)."""
    seen: set[str] = set()
    found: list[str] = []
    for match in _WORD.finditer(question):
        word = match.group(0).strip("-")
        key = word.lower()
        if key in seen or key in _STOPWORDS or (len(word) < 3 and word.isascii()):
            continue
        seen.add(key)
        found.append(word)
        if len(found) == _MAX_KEYWORDS:
            break
    return found


def asks_for_code(question: str) -> bool:
    """Whether the question asks for code, in which case an answer with a fenced block wins."""
    return _CODE_WORDS.search(question) is not None


def answer_markdown(question: str, behaviour: Behaviour | None = None) -> str:
    """The markdown a fake site answers ``question`` with: ``behaviour.answer`` if set, else
    the corpus answer chosen for the question (:func:`chosen_answer`), followed by a
    generated long one when ``length`` is ``"long"``, and always ending with a reference line
    unique to the question (so two questions never get the same text, and a stale answer is
    told from a new one)."""
    behaviour = behaviour or Behaviour()
    if behaviour.answer is not None:
        return behaviour.answer
    blocks = [chosen_answer(question, off_topic=behaviour.off_topic).markdown]
    if behaviour.length == "long":
        long = _LONG[_CJK.search(question) is not None]
        blocks.append(next(a.markdown for a in corpus() if a.name == long))
    blocks.append(f"Reference: {_reference(question)}")
    if behaviour.files:  # C11.1: created files linked in Markdown as sandbox:/mnt/data/<name>
        links = [f"- [{name}](sandbox:/mnt/data/{quote(name)})" for name in behaviour.files]
        blocks.append("Here are the files:\n\n" + "\n".join(links))
    return "\n\n".join(blocks)


def chosen_answer(question: str, *, off_topic: bool = False) -> CorpusAnswer:
    """The corpus answer (``bridge/fakes/corpus``) the fakes give ``question``, in its language.

    On topic: the answer whose own question and text share the most of the question's content
    words (its own question counting double; one with a fenced block first when code is
    asked for). Off topic: a real answer of at least ``_OFF_TOPIC_MIN_CHARS`` that shares the
    fewest of them, then the fewest of any of the question's words: a fluent answer about
    something else, which only a relevance check can catch. Ties go by a hash of the question,
    so the choice is deterministic and still varies between questions."""
    japanese = _CJK.search(question) is not None
    pool = [
        answer
        for answer in corpus()
        if answer.name not in _LONG.values()
        and (_CJK.search(answer.question) is not None) == japanese
    ]
    content = [word.lower() for word in keywords(question)]
    code = asks_for_code(question)

    def tie(answer: CorpusAnswer) -> str:
        return hashlib.sha1(f"{question}\0{answer.name}".encode()).hexdigest()

    if off_topic:
        every = list(dict.fromkeys(w.lower() for w in _ANY_WORD.findall(question)))
        candidates = [a for a in pool if len(a.markdown) >= _OFF_TOPIC_MIN_CHARS] or pool

        def distance(answer: CorpusAnswer) -> tuple[int, int, str]:
            lowered = answer.markdown.lower()
            anywhere = sum(word in lowered for word in every)
            return (_shared(content, answer.markdown), anywhere, tie(answer))

        return min(candidates, key=distance)

    def fit(answer: CorpusAnswer) -> tuple[int, int, str]:
        score = 2 * _shared(content, answer.question) + _shared(content, answer.markdown)
        return (-score, -(code and "```" in answer.markdown), tie(answer))

    return min(pool, key=fit)


def _shared(words: list[str], text: str) -> int:
    """How many of ``words`` (lower-case) occur in ``text`` as the start of a word (a plural
    matches its singular: "decorators" finds "decorator")."""
    lowered = text.lower()
    count = 0
    for word in words:
        stem = word[:-1] if len(word) > 4 and word.endswith("s") and word.isascii() else word
        if stem.isascii():
            found = re.search(rf"(?<![a-z0-9]){re.escape(stem)}", lowered) is not None
        else:
            found = stem in lowered
        count += found
    return count


def _reference(question: str) -> str:
    return "fake-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:12]


def answer_lines(markdown: str) -> list[str]:
    """The lines of text a reader of the rendered answer sees: read from the same library's
    tokens the pages are rendered from (:func:`bridge.fakes.render.answer_lines`)."""
    # Imported here: the scenario loader imports this module for Behaviour alone.
    from bridge.fakes.render import answer_lines as lines

    return lines(markdown)

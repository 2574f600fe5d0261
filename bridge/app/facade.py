"""The one facade everything drives: ``Bridge.ask`` and ``Bridge.ask_both`` (and reading
conversations: ``Bridge.get_conversation``, ``Bridge.list_conversations``).

The MCP tools, the CLI, the pytest fixtures and the scenario harness all call these; no
second code path exists for tests.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path

from bridge.app.jobs import Job, JobRunner, JobStore, JobUnreadable
from bridge.cdp.browser import Browser
from bridge.cdp.session import CdpSession
from bridge.errors import BridgeError, ProviderStuck
from bridge.policy.files import FilePolicy
from bridge.providers.attachments import Attachments, prepare_files
from bridge.providers.conversations import (
    Conversation,
    ConversationList,
    ConversationSource,
    conversation_url,
    get_conversation,
    list_conversations,
)
from bridge.providers.flow import AskFlow, connect_tab, run_ask
from bridge.providers.places import resolve_place
from bridge.providers.research import RESEARCH_TIMEOUT_S
from bridge.providers.results import PROVIDERS, AskResult, BothResult, Provider
from bridge.providers.resume import resume_answer
from bridge.providers.specs import (
    AnswerSource,
    AskOptions,
    ProgressCallback,
    Where,
    provider_spec,
)
from bridge.store.outputs import outputs_folder
from bridge.store.state import StateStore, project_key
from bridge.tools.browsing import BrowserTools, ToolHub, ToolSettings

__all__ = ["Bridge", "Files", "read_files"]

log = logging.getLogger(__name__)

#: Files for a question: paths, or files already read by ``read_files``.
Files = Sequence[str | PathLike[str]] | Attachments | None


async def read_files(files: Files, policy: FilePolicy | None = None) -> Attachments:
    """Read and check the files of a question off the event loop (docs/sites.md#attachments):
    each path through ``policy`` (docs/flows.md#file-policy; default: the working directory
    only) before any is read. ``Attachments`` were checked when they were read."""
    if files is None:
        return Attachments()
    if isinstance(files, Attachments):
        return files
    if isinstance(files, str | PathLike):
        raise TypeError("files is a list of paths, not one path")
    return await asyncio.to_thread(prepare_files, list(files), policy=policy)


class Bridge:
    """What bridge does, over one browser: ask ChatGPT, Gemini or both (``ask``, ``ask_both``),
    read their conversations, and run asks as jobs that outlive this process (``start_job``,
    ``wait_job``, ``cancel_job``: delegated to ``JobRunner``). Every face (MCP, CLI, pytest,
    scenarios) calls these methods; ``Runtime`` builds one."""

    def __init__(
        self,
        browser: Browser,
        *,
        state_dir: Path | None = None,
        session_key: str | None = None,
        flow: AskFlow | None = None,
        tool_settings: ToolSettings | None = None,
        file_policy: FilePolicy | None = None,
    ) -> None:
        self.browser = browser
        self.store = StateStore(state_dir)
        # Which files may go to a page (docs/flows.md#file-policy): the working directory
        # unless told more, never bridge's own state folder.
        policy = file_policy if file_policy is not None else FilePolicy.create()
        self.tools = ToolHub(browser, tool_settings, files=policy.protecting(self.store.root))
        self.tools.state_root = self.store.root
        self.session_key = session_key or project_key()
        self.flow = flow or AskFlow()
        # One ask at a time per (key, provider): they share one tab.
        self._locks: dict[tuple[str, Provider], asyncio.Lock] = {}
        # The tab a running ask uses, so diagnosis tools can look at it without waiting.
        self._asking: dict[tuple[str, Provider], CdpSession] = {}
        # Long asks as jobs (docs/flows.md#jobs): their records, and the ones run here.
        self.jobs = JobStore(self.store.root)
        self._runner = JobRunner(self, self.jobs)

    @property
    def linked(self) -> bool:
        """Whether the browser's extension is linked now (what needs the browser would not
        wait for it to connect)."""
        return self.browser.connector.current is not None

    @property
    def file_policy(self) -> FilePolicy:
        """The files the ask tools and the browser tools may give to a page (one policy)."""
        return self.tools.files

    @file_policy.setter
    def file_policy(self, policy: FilePolicy) -> None:
        self.tools.files = policy.protecting(self.store.root)

    async def read_files(self, files: Files) -> Attachments:
        """:func:`read_files` under this bridge's file policy."""
        return await read_files(files, self.file_policy)

    def _lock(self, key: str, provider: Provider) -> asyncio.Lock:
        return self._locks.setdefault((key, provider), asyncio.Lock())

    async def ask(
        self,
        provider: Provider,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        skip_thinking: bool = False,
        on_progress: ProgressCallback | None = None,
        answer_source: AnswerSource = "auto",
        files: Files = None,
        mode: str | None = None,
        conversation: str | None = None,
        project: str | None = None,
        gpt: str | None = None,
        gem: str | None = None,
        temporary: bool = False,
        effort: str | None = None,
        deep_think: bool = False,
        outputs_dir: str | PathLike[str] | None = None,
        outputs_id: str | None = None,
        research: bool = False,
        research_answers: str | None = None,
        flow: AskFlow | None = None,
    ) -> AskResult:
        """Ask one provider through its web UI; a typed BridgeError says what went wrong.

        ``files``: paths sent with the question (docs/sites.md#attachments), read and
        checked before anything is typed (``AttachmentRefused`` names the file that cannot
        go); small text files go into the question, others through the site's upload.
        ``mode``: the site's mode to ask in (docs/sites.md#modes), an item of its picker by
        id or label; the ask fails closed (``ModeUnavailable``, ``ModeUnconfirmed``) before
        anything is typed when the page does not show it chosen.
        Where (docs/sites.md#where): ``conversation`` (its URL or id) continues that
        conversation; ``project`` / ``gpt`` (ChatGPT) and ``gem`` (Gemini) start a new chat
        inside them; ``temporary`` asks in a temporary chat and records nothing in the
        sessions. Bad forms are a ValueError before the browser is touched; a place the page
        does not show is ``PlaceNotFound`` (``TemporaryChatUnavailable``) before anything
        is typed. ``effort`` (ChatGPT only): the thinking effort, a tier of its Effort
        submenu ("high", "extended", "pro"); ``deep_think`` (Gemini only): Deep Think on
        (docs/sites.md#effort). Each is confirmed on the page before anything is typed
        (``EffortUnavailable``, ``EffortUnconfirmed``). ``research``: Deep Research
        (docs/sites.md#research), turned on in the site's control and confirmed before
        anything is typed (``ResearchUnavailable``); the answer is the finished report with
        its sources, or the site's clarifying questions unless ``research_answers`` are
        given; the default timeout is then RESEARCH_TIMEOUT_S. ``flow``: how this ask is
        carried out, instead of the Bridge's own (a capture rides along an ask this way:
        bridge.app.captures)."""
        _check_provider(provider)
        if not question.strip():
            raise ValueError("the question is empty")
        effort = _check_effort(provider, effort, deep_think)
        research_answers = _check_research(research, research_answers, temporary)
        options = AskOptions(
            new_chat=new_chat,
            timeout=_default_timeout(timeout, research),
            skip_thinking=skip_thinking,
            on_progress=on_progress,
            answer_source=answer_source,
            mode=_mode_or_none(mode),
            conversation=conversation,
            project=project,
            gpt=gpt,
            gem=gem,
            temporary=temporary,
            effort=effort,
            deep_think=deep_think,
            outputs_dir=self.outputs_dir(outputs_dir),
            outputs_id=outputs_id,
            research=research,
            research_answers=research_answers,
        )
        resolve_place(provider_spec(provider, self.store.root), options)  # ValueError early
        attachments = await self.read_files(files)
        key = session_key or self.session_key
        slot = (key, provider)
        async with self._lock(key, provider):
            attempts = 1 + provider_spec(provider, self.store.root).stuck_retries
            try:
                for attempt in range(1, attempts + 1):
                    try:
                        result = await run_ask(
                            self.browser,
                            self.store,
                            provider,
                            question,
                            key,
                            options,
                            flow or self.flow,
                            on_tab=lambda tab: self._asking.__setitem__(slot, tab),
                            attachments=attachments,
                        )
                    except ProviderStuck as exc:
                        if attempt == attempts:
                            await self._record(
                                provider, question, key, None, exc, temporary=temporary
                            )
                            raise ProviderStuck(provider, exc.reason, attempt) from exc
                        # A hung page is not reused: start the next attempt in a fresh chat
                        # (a conversation asked for is opened again instead).
                        options.new_chat = options.conversation is None
                        continue
                    except BridgeError as exc:
                        await self._record(provider, question, key, None, exc, temporary=temporary)
                        raise
                    result.used.retries = attempt - 1
                    await self._record(provider, question, key, result, None, temporary=temporary)
                    # State that could not be read or written: said once per Bridge, in
                    # the log and in the result of the ask that met it (or the next one).
                    note = self.store.take_fault_note()
                    if note is not None:
                        result.notes.append(note)
                    return result
            finally:
                self._asking.pop(slot, None)
        raise AssertionError("unreachable")

    def outputs_dir(self, named: str | PathLike[str] | None) -> str | None:
        """The folder a caller named for generated images and files, resolved and checked
        before anything is asked (docs/sites.md#outputs): never a protected place
        (credentials, browser profiles, bridge's own state; ``OutputsFolderRefused``).
        None: each ask saves under ``<state dir>/outputs/<id>/``."""
        if named is None:
            return None
        policy = self.file_policy
        return str(
            outputs_folder(self.store.root, "", named, protected=policy.protected, base=policy.base)
        )

    def browser_tools(self, client: str = "default") -> BrowserTools:
        """Browser operations on any tab (navigate, snapshot, click, …) for one client: its
        own current tab. The MCP browser tools are thin wrappers over these."""
        return self.tools.client(client)

    async def provider_tab(
        self, provider: Provider, *, session_key: str | None = None, new_chat: bool = False
    ) -> CdpSession:
        """The tab an ask would use (recorded, open or new), connected and ready to read.

        While an ask runs, this is the tab that ask uses, at once: diagnosis (snapshots,
        DOM reads) must answer during a long answer, not after it.
        """
        key = session_key or self.session_key
        asking = self._asking.get((key, provider))
        if asking is not None and asking.ended is None and not new_chat:
            return asking
        async with self._lock(key, provider):
            return await connect_tab(self.browser, self.store, provider, key, new_chat=new_chat)

    async def get_conversation(
        self,
        provider: Provider,
        url: str | None = None,
        *,
        session_key: str | None = None,
        source: ConversationSource = "auto",
    ) -> Conversation:
        """Every turn of a conversation, in order (docs/sites.md#conversations): the
        project's own (the tab an ask would use) or the one at ``url``.

        Waits for a running ask of the same project and provider (that tab is reloaded to
        see the page's own read of the conversation). ``source``: "auto" reads the network
        first and checks it against the page; "network" or "dom" returns that reading alone.
        """
        _check_provider(provider)
        if source not in ("auto", "network", "dom"):
            raise ValueError(f"unknown source {source!r}: use auto, network or dom")
        spec = provider_spec(provider, self.store.root)
        if source == "network" and spec.pack.network.conversation_read is None:
            raise ValueError(
                f"{provider} has no network reading of conversations (its read request's "
                "payload is undocumented, docs/sites.md#conversations): use source auto or dom"
            )
        if url is not None:
            url = conversation_url(spec, url)
        key = session_key or self.session_key
        async with self._lock(key, provider):
            return await get_conversation(self.browser, self.store, spec, key, url, source)

    async def list_conversations(
        self, provider: Provider, *, session_key: str | None = None
    ) -> ConversationList:
        """The recent conversations the site's page lists (title and url, the page's order),
        read from the provider's tab (docs/sites.md#conversations); never waits for an ask."""
        _check_provider(provider)
        tab = await self.provider_tab(provider, session_key=session_key)
        return await list_conversations(
            tab, provider_spec(provider, self.store.root), self.store.root
        )

    async def ask_both(
        self,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        providers: Sequence[Provider] = PROVIDERS,
        on_progress: ProgressCallback | None = None,
        files: Files = None,
        modes: Mapping[Provider, str | None] | None = None,
        on_done: DoneCallback | None = None,
        conversations: Mapping[Provider, str | None] | None = None,
        project: str | None = None,
        gpt: str | None = None,
        gem: str | None = None,
        temporary: bool = False,
        effort: str | None = None,
        deep_think: bool = False,
        outputs_dir: str | PathLike[str] | None = None,
        research: bool = False,
        research_answers: Mapping[Provider, str | None] | None = None,
    ) -> BothResult:
        """Ask every provider at once; each side's answer or error, never one hiding the other.

        ``files`` are read once, before either side types (``AttachmentRefused`` ends the
        call: no side asks). ``modes``: each provider's mode (docs/sites.md#modes).
        ``effort`` is ChatGPT's, ``deep_think`` Gemini's (docs/sites.md#effort).
        ``on_done`` hears each side's answer or error the moment that side ends, so a caller
        can show the first answer while the other side still works (``bridge ask``).
        Where (docs/sites.md#where): ``conversations`` each provider's conversation;
        ``project`` and ``gpt`` go to ChatGPT's side, ``gem`` to Gemini's; ``temporary`` to
        both. ``research``: Deep Research on every side (docs/sites.md#research), each side's
        own ``research_answers`` for its clarifying questions; a side that does not offer it
        fails alone (``ResearchUnavailable``, nothing sent there) while the other reports."""
        started = time.monotonic()
        places: dict[Provider, Where] = {
            p: {
                "conversation": (conversations or {}).get(p),
                "project": project if p == "chatgpt" else None,
                "gpt": gpt if p == "chatgpt" else None,
                "gem": gem if p == "gemini" else None,
                "temporary": temporary,
            }
            for p in providers
        }
        for p in providers:  # every side's forms checked before either side asks
            self.check_where(p, new_chat=new_chat, **places[p])
        if effort is not None and "chatgpt" not in providers:
            raise ValueError(
                "effort is ChatGPT's thinking effort: ask ChatGPT too, or leave it out"
            )
        if deep_think and "gemini" not in providers:
            raise ValueError("deep_think is Gemini's Deep Think: ask Gemini too, or leave it out")
        answers: dict[Provider, str | None] = {
            p: _check_research(research, (research_answers or {}).get(p), temporary)
            for p in providers
        }  # every side's research options checked before either side asks
        attachments = await self.read_files(files)
        folder = self.outputs_dir(outputs_dir)  # refused before either side asks

        async def one(provider: Provider) -> AskResult:
            try:
                result = await self.ask(
                    provider,
                    question,
                    new_chat=new_chat,
                    timeout=timeout,
                    session_key=session_key,
                    on_progress=on_progress,
                    files=attachments,
                    mode=(modes or {}).get(provider),
                    **places[provider],
                    effort=effort if provider == "chatgpt" else None,
                    deep_think=deep_think and provider == "gemini",
                    outputs_dir=folder,
                    research=research,
                    research_answers=answers[provider],
                )
            except Exception as exc:
                await _tell_done(on_done, provider, exc)
                raise
            await _tell_done(on_done, provider, result)
            return result

        outcomes = await asyncio.gather(*(one(p) for p in providers), return_exceptions=True)
        return BothResult.from_outcomes(providers, outcomes, (time.monotonic() - started) * 1000)

    # -- jobs (docs/flows.md#jobs): run by bridge.app.jobs.JobRunner ---------------------

    def check_where(
        self,
        provider: Provider,
        *,
        new_chat: bool = False,
        conversation: str | None = None,
        project: str | None = None,
        gpt: str | None = None,
        gem: str | None = None,
        temporary: bool = False,
    ) -> None:
        """A ValueError naming the accepted forms when the place is not one ``provider``
        can be asked in (docs/sites.md#where); nothing touches the browser."""
        _check_provider(provider)
        options = AskOptions(
            new_chat=new_chat,
            conversation=conversation,
            project=project,
            gpt=gpt,
            gem=gem,
            temporary=temporary,
        )
        resolve_place(provider_spec(provider, self.store.root), options)

    def check_research(self, research: bool, answers: str | None, temporary: bool) -> str | None:
        """A side's research options checked before any side asks (the both-sites MCP tool
        starts one job per side: a refusal found at the second must not follow the first's
        start); the answers as given, None for none (docs/sites.md#research)."""
        return _check_research(research, answers, temporary)

    async def start_job(
        self,
        provider: Provider,
        question: str,
        *,
        new_chat: bool = False,
        timeout: float | None = None,
        session_key: str | None = None,
        files: Files = None,
        mode: str | None = None,
        conversation: str | None = None,
        project: str | None = None,
        gpt: str | None = None,
        gem: str | None = None,
        temporary: bool = False,
        effort: str | None = None,
        deep_think: bool = False,
        outputs_dir: str | PathLike[str] | None = None,
        research: bool = False,
        research_answers: str | None = None,
    ) -> Job:
        """Start an ask that outlives the call that wants it, and return its job at once
        (``wait_job`` waits for it). Answers of thinking models take longer than MCP clients
        let a call last; a job is collected later, by this process or, if it is gone, by
        the next one. What needs no browser to refuse (unknown provider, empty question, a
        file that cannot go) raises here, before a job exists."""
        _check_provider(provider)
        if not question.strip():
            raise ValueError("the question is empty")
        where: Where = {
            "conversation": conversation,
            "project": project,
            "gpt": gpt,
            "gem": gem,
            "temporary": temporary,
        }
        self.check_where(provider, new_chat=new_chat, **where)
        effort = _check_effort(provider, effort, deep_think)
        research_answers = _check_research(research, research_answers, temporary)
        attachments = await self.read_files(files)
        key = session_key or self.session_key
        timeout_s = _default_timeout(timeout, research)
        job = Job.new(
            provider,
            question,
            key,
            timeout_s,
            new_chat=new_chat,
            mode=_mode_or_none(mode),
            **where,
            effort=effort,
            deep_think=deep_think,
            outputs_dir=self.outputs_dir(outputs_dir),
            research=research,
            research_answers=research_answers,
        )
        return await self._runner.start(job, attachments)

    async def wait_job(
        self, job_id: str, wait: float = 0.0, *, on_progress: ProgressCallback | None = None
    ) -> Job:
        """The job after waiting at most ``wait`` seconds for it to end: done (``result``),
        failed (``error``), or still running (its progress). ``on_progress`` hears the
        answer's progress meanwhile. A running job whose process is gone is picked up here
        and watched to its end from its conversation (bridge.providers.resume); one that
        another live process runs is waited for through its lock. ``JobNotFound`` or
        ``JobUnreadable`` when there is no such job to read."""
        return await self._runner.wait(job_id, wait, on_progress=on_progress)

    async def read_job(self, job_id: str) -> Job:
        """The job as it is now, without waiting and without picking up a job whose
        process is gone (``wait_job`` does both): the one running here as it is in memory,
        any other as its record says. ``JobNotFound`` or ``JobUnreadable`` as ``wait_job``."""
        return await self._runner.snapshot(job_id)

    def cancel_job(self, job_id: str) -> bool:
        """Stop a job this Bridge runs: its answer is stopped in the page and the job ends as
        ``cancelled``. False if it runs elsewhere or has ended."""
        return self._runner.cancel(job_id)

    async def list_jobs(self, limit: int = 20) -> tuple[list[Job], list[JobUnreadable]]:
        """The newest jobs of this state directory (the ones running here as they are now),
        and the job files that cannot be read."""
        return await self._runner.list(limit)

    def abandon_jobs(self) -> None:
        """The process is stopping: let go of the jobs it runs without recording an end. The
        sites finish those answers anyway; the next process collects them from their
        conversations, so a restart loses nothing (a tab closing as the browser stops must
        not be recorded as the job's failure)."""
        self._runner.abandon()

    async def collect_answer(
        self,
        job: Job,
        *,
        on_progress: ProgressCallback,
        on_tab: Callable[[CdpSession], None],
    ) -> AskResult:
        """A job's answer read from its conversation, after the process that asked has gone
        (bridge.providers.resume), as an ask of its project and provider: one at a time per
        tab, recorded in the history."""
        try:
            async with self._lock(job.session_key, job.provider):
                result = await resume_answer(
                    self.browser,
                    self.store,
                    job.provider,
                    job.question,
                    job.session_key,
                    url=job.url,
                    tab_id=job.tab_id,
                    timeout=job.deadline - time.time(),
                    flow=self.flow,
                    on_progress=on_progress,
                    on_tab=on_tab,
                    research=job.research,
                    research_answers=job.research_answers,
                    outputs_dir=job.outputs_dir,
                    outputs_id=job.id,
                )
        except BridgeError as exc:
            await self._record(job.provider, job.question, job.session_key, None, exc)
            raise
        await self._record(job.provider, job.question, job.session_key, result, None)
        return result

    def asking_tab(self, session_key: str, provider: Provider) -> CdpSession | None:
        """The tab a running ask of this project and provider uses, if any."""
        return self._asking.get((session_key, provider))

    async def _record(
        self,
        provider: Provider,
        question: str,
        key: str,
        result: AskResult | None,
        error: BridgeError | None,
        *,
        temporary: bool = False,
    ) -> None:
        """One history line per ask. A temporary chat's line keeps that an ask happened and
        how it ended, never its question, answer or URL: the person asked the site to keep
        nothing, and bridge keeps nothing of it either (docs/sites.md#where)."""
        if temporary:
            line: dict[str, object] = {"project": key, "provider": provider, "temporary": True}
            if result is not None:
                line.update(outcome="ok", timings=result.timings.to_dict())
            elif error is not None:
                line.update(outcome=error.code)
            await self._append_history(line)
            return
        record: dict[str, object] = {"project": key, "provider": provider, "question": question}
        if result is not None:
            record.update(
                answer=result.answer,
                url=result.url,
                timings=result.timings.to_dict(),
                outcome="ok",
                used=result.used.to_dict(),
            )
        elif error is not None:
            record.update(outcome=error.code, error=str(error))
        await self._append_history(record)

    async def _append_history(self, record: dict[str, object]) -> None:
        try:
            await self.store.append_history_async(record)
        except OSError as exc:
            # The answer still reaches the caller; the history line is what is lost.
            self.store.report_fault("append to", self.store.history_path, exc)


#: Told each side's outcome of ``ask_both`` as it ends: its answer, or what it raised.
DoneCallback = Callable[[Provider, AskResult | Exception], Awaitable[None] | None]


async def _tell_done(
    on_done: DoneCallback | None, provider: Provider, outcome: AskResult | Exception
) -> None:
    """A listener that fails costs its own display, never the answer."""
    if on_done is None:
        return
    try:
        told = on_done(provider, outcome)
        if inspect.isawaitable(told):
            await told
    except Exception as exc:
        log.warning("on_done listener failed for %s: %r", provider, exc)


def _check_provider(provider: str) -> None:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}: use one of {', '.join(PROVIDERS)}")


def _check_effort(provider: Provider, effort: str | None, deep_think: bool) -> str | None:
    """The effort as given (None for none), refused before any browser work where it cannot
    apply: ``effort`` is ChatGPT's thinking effort, ``deep_think`` Gemini's Deep Think
    (docs/sites.md#effort)."""
    if deep_think and provider != "gemini":
        raise ValueError(
            f"deep_think is Gemini's Deep Think, not {provider}'s: for ChatGPT ask with an "
            "effort (e.g. effort='high') instead"
        )
    if effort is None:
        return None
    if provider != "chatgpt":
        raise ValueError(
            f"effort is ChatGPT's thinking effort, not {provider}'s: for Gemini ask with "
            "deep_think=True instead"
        )
    if not effort.strip():
        raise ValueError(
            "the effort is empty: name a tier (e.g. medium, high, extra high, pro) or leave it out"
        )
    return effort.strip()


def _default_timeout(timeout: float | None, research: bool) -> float:
    """The answer's wait: as given, else 8 min, or RESEARCH_TIMEOUT_S for Deep Research
    (its reports take tens of minutes: docs/sites.md#research)."""
    if timeout is not None:
        return timeout
    return RESEARCH_TIMEOUT_S if research else 480.0


def _check_research(research: bool, answers: str | None, temporary: bool) -> str | None:
    """The clarifying answers as given (None for none), refused before any browser work
    where they cannot apply: answers without research, research in a temporary chat (the
    site refuses it there: SITE-FACTS C9.13)."""
    if answers is not None and not research:
        raise ValueError(
            "research_answers answer Deep Research's clarifying questions: ask with "
            "research=True too, or leave them out"
        )
    if research and temporary:
        raise ValueError(
            "Deep Research is not offered in temporary chats (SITE-FACTS C9.13): ask without "
            "temporary, or without research"
        )
    if answers is not None and not answers.strip():
        raise ValueError("research_answers is empty: give the answers, or leave it out")
    return answers.strip() if answers is not None else None


def _mode_or_none(mode: str | None) -> str | None:
    """A mode as given, None for none; a blank one is a mistake worth saying."""
    if mode is None:
        return None
    if not mode.strip():
        raise ValueError(
            "the mode is empty: name one of the site's modes (e.g. thinking) or leave it out"
        )
    return mode.strip()

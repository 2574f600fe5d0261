"""The ``ask`` tool group: asking ChatGPT and Gemini, collecting long answers as jobs,
reading conversations, and looking at a provider tab when an answer looks wrong.

The per-provider ask tools (ask_chatgpt_web, ask_gemini_web) are one definition made once per
provider (``_ask_one``); every tool goes through ``bridge.mcp.registration.tool``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from bridge.app.facade import Bridge
from bridge.app.jobs import Job
from bridge.app.tab_snapshot import resolve_target, take_snapshot
from bridge.mcp.outputs_content import output_contents, outputs_of
from bridge.mcp.registration import text_result, tool
from bridge.providers.results import Progress, Provider
from bridge.providers.specs import Where
from bridge.tools.outline import dom_matches

__all__ = ["PROVIDER_ORDER", "register_ask_tools"]

Question = Annotated[str, Field(description="The question, as you would type it in the chat.")]
NewChat = Annotated[
    bool, Field(description="Start a new conversation instead of continuing this project's one.")
]
Timeout = Annotated[
    float | None,
    Field(
        description="Seconds the answer may take in all (default 480: 8 minutes, "
        "docs/sites.md#timeouts); give a thinking or Pro model more, e.g. 3600. How long "
        "this call waits is max_wait: a longer answer comes back as a job.",
        gt=0,
    ),
]
#: Under the 60 s many MCP clients allow a tool call, with room for the reply.
DEFAULT_MAX_WAIT_S = 50.0
MAX_WAIT_LIMIT_S = 600.0
MaxWait = Annotated[
    float,
    Field(
        description="Seconds this call waits for the answer (default 50, below the 60 s many "
        "clients allow a call). An answer not done by then comes back as a job id with the "
        "progress so far: call get_answer with it. 0 returns the job at once.",
        ge=0,
        le=MAX_WAIT_LIMIT_S,
    ),
]
Files = Annotated[
    list[str] | None,
    Field(
        description="Paths of files to send with the question, on the machine bridge runs "
        "on (absolute, or relative to its working directory). Small UTF-8 text files go "
        'into the question between <file name="…"> and </file> lines; other files are '
        "attached through the site's upload button. At most 10 files, 25 MB each, 50 MB "
        "in all (docs/sites.md#attachments). Only files under bridge's working directory or "
        "a path the person allowed with --allow-path; hidden files (.env, .git, …) and "
        "credential folders (~/.ssh, …) are refused (path_not_allowed). Gemini asks once "
        "for consent to uploads: until the person has agreed in its tab, the call fails "
        "with consent_required, nothing sent.",
    ),
]
Mode = Annotated[
    str | None,
    Field(
        description="The site's mode to ask in, as its mode picker names it: an item's "
        "label or id, e.g. 'thinking', 'instant', 'gpt-5-5-pro' (ChatGPT) or 'fast', "
        "'thinking', 'pro' (Gemini). bridge chooses it in the picker and asks only once the "
        "page shows it chosen; otherwise the call fails (mode_unavailable lists the modes "
        "offered, mode_unconfirmed) with nothing sent. Leave it out to use the page's mode.",
    ),
]
Conversation = Annotated[
    str | None,
    Field(
        description="Continue this conversation: its URL on the site (https://chatgpt.com/c/"
        "<uuid>, a project's or GPT's /g/…/c/<uuid>; https://gemini.google.com/app/<id>, a "
        "Gem's /gem/<gem>/<id>) or its bare id. URLs on other hosts are refused. The call "
        "fails with place_not_found, nothing sent, when the page does not show it. Not with "
        "new_chat or temporary.",
    ),
]
Project = Annotated[
    str | None,
    Field(
        description="ChatGPT only: ask in a new chat inside this project, given as its id "
        "g-p-<32 hex> or its URL (https://chatgpt.com/g/g-p-…/project). place_not_found, "
        "nothing sent, when the site does not show it.",
    ),
]
Gpt = Annotated[
    str | None,
    Field(
        description="ChatGPT only: ask in a new chat with this custom GPT, given as its id "
        "g-<id> or its URL (https://chatgpt.com/g/g-<id>-<name>). place_not_found, nothing "
        "sent, when the site does not show it.",
    ),
]
Gem = Annotated[
    str | None,
    Field(
        description="Gemini only: ask in a new chat with this Gem, given as its id (e.g. "
        "4221cfdd4fe7, coding-partner) or its URL (https://gemini.google.com/gem/<id>). "
        "place_not_found, nothing sent, when the site does not show it.",
    ),
]
Temporary = Annotated[
    bool,
    Field(
        description="Ask in a temporary chat (ChatGPT ?temporary-chat=true, Gemini's "
        "temporary-chat button): the site keeps no history of it and bridge records no "
        "session, so the next ask continues the earlier conversation. Fails with "
        "temporary_chat_unavailable, nothing sent, when the page does not confirm it.",
    ),
]
Effort = Annotated[
    str | None,
    Field(
        description="ChatGPT's thinking effort, a tier of its Intelligence picker's Effort "
        "menu by name: 'instant', 'medium', 'high', 'extra high', 'pro' (also the older "
        "'light', 'standard', 'extended', 'heavy', or 'max'). bridge chooses it in the page and "
        "asks only once the page shows it chosen; otherwise the call fails "
        "(effort_unavailable lists the tiers offered, or carries the page's notice for a tier "
        "out of quota; effort_unconfirmed) with nothing sent. used.effort records the tier, "
        "used.model the model that answered. ChatGPT only; leave it out to keep the page's tier.",
    ),
]
OutputsDir = Annotated[
    str | None,
    Field(
        description="Folder to save the images and files the answer generates in (absolute, "
        "or relative to bridge's working directory); default: a folder of this ask's own "
        "under bridge's state directory. Images come back as image content plus their path, "
        "files as resource links (name, size, type); used.outputs lists them. A protected "
        "place (~/.ssh, browser profiles, bridge's state) is refused (outputs_folder_refused) "
        "before anything is asked; a download the site refuses fails the call "
        "(download_refused, naming the file and why).",
    ),
]
DeepThink = Annotated[
    bool,
    Field(
        description="Turn on Gemini's Deep Think (Tools -> Deep Think) before asking; the call "
        "fails (effort_unavailable, effort_unconfirmed) with nothing sent when the page does "
        "not show it on. Gemini only; Deep Think answers take minutes: give a long timeout.",
    ),
]
Research = Annotated[
    bool,
    Field(
        description="Deep Research (docs/sites.md#research): turned on in the site's own "
        "control before asking; fails with research_unavailable, nothing sent, when the page "
        "does not offer it. Always a job: the call returns its id as soon as the question is "
        "sent (progress says 'research'); get_answer returns the finished report as markdown "
        "with its sources (used.research.sources), or the site's clarifying questions "
        "(used.research.state 'questions'): ask again with research_answers to answer them. "
        "Takes many minutes (default timeout 40 min).",
    ),
]
ResearchAnswers = Annotated[
    str | None,
    Field(
        description="With research: the answers to the site's clarifying questions, sent as "
        "the next message only if it asks them.",
    ),
]
Target = Annotated[
    str, Field(description="'chatgpt', 'gemini', or a tab id (a number) from the browser.")
]


#: The providers in the order the tools ask and report them, with the names people know.
PROVIDER_ORDER: tuple[Provider, ...] = ("chatgpt", "gemini")
PROVIDER_TITLES: dict[Provider, str] = {"chatgpt": "ChatGPT", "gemini": "Gemini"}
#: The site each per-provider ask tool names in its description.
ASK_ONE_SITES: dict[Provider, str] = {
    "chatgpt": "ChatGPT (chatgpt.com)",
    "gemini": "Gemini (gemini.google.com)",
}
#: The per-provider ask tools' description. Its indentation is that of the docstrings the
#: two tools had before they were made from one definition: clients see the same text
#: (tests/mcp/tool_surface.json pins it).
ASK_ONE_DESCRIPTION = """Ask {site} in the user's browser and return its answer.

        The text result is the answer (code blocks fenced); the structured result adds the
        conversation url, step timings and how the answer was obtained. An answer not done
        within max_wait seconds comes back as a job: collect it with get_answer.
        """


def register_ask_tools(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    """The ask group: the asks and their jobs, reading conversations, diagnosis."""
    for provider in PROVIDER_ORDER:
        description = ASK_ONE_DESCRIPTION.format(site=ASK_ONE_SITES[provider])
        tool(server, description=description)(_ask_one(provider, get_bridge))
    _register_ask_both(server, get_bridge)
    _register_job_tools(server, get_bridge)
    _register_diagnosis_tools(server, get_bridge)
    _register_conversation_tools(server, get_bridge)


def _ask_one(
    provider: Provider, get_bridge: Callable[[], Bridge]
) -> Callable[..., Awaitable[CallToolResult]]:
    """The ask tool of one provider, named ask_<provider>_web."""

    async def ask_chatgpt(
        question: Question,
        ctx: Context,
        new_chat: NewChat = False,
        timeout: Timeout = None,
        files: Files = None,
        max_wait: MaxWait = DEFAULT_MAX_WAIT_S,
        mode: Mode = None,
        conversation: Conversation = None,
        project: Project = None,
        gpt: Gpt = None,
        gem: Gem = None,
        temporary: Temporary = False,
        effort: Effort = None,
        outputs_dir: OutputsDir = None,
        research: Research = False,
        research_answers: ResearchAnswers = None,
    ) -> CallToolResult:
        where = _where(conversation, project, gpt, gem, temporary)
        return await _ask(
            question,
            ctx,
            new_chat,
            timeout,
            files,
            max_wait,
            mode,
            where,
            effort=effort,
            outputs_dir=outputs_dir,
            research=research,
            research_answers=research_answers,
        )

    async def ask_gemini(
        question: Question,
        ctx: Context,
        new_chat: NewChat = False,
        timeout: Timeout = None,
        files: Files = None,
        max_wait: MaxWait = DEFAULT_MAX_WAIT_S,
        mode: Mode = None,
        conversation: Conversation = None,
        project: Project = None,
        gpt: Gpt = None,
        gem: Gem = None,
        temporary: Temporary = False,
        deep_think: DeepThink = False,
        outputs_dir: OutputsDir = None,
        research: Research = False,
        research_answers: ResearchAnswers = None,
    ) -> CallToolResult:
        where = _where(conversation, project, gpt, gem, temporary)
        return await _ask(
            question,
            ctx,
            new_chat,
            timeout,
            files,
            max_wait,
            mode,
            where,
            deep_think=deep_think,
            outputs_dir=outputs_dir,
            research=research,
            research_answers=research_answers,
        )

    async def _ask(
        question: str,
        ctx: Context,
        new_chat: bool,
        timeout: float | None,
        files: list[str] | None,
        max_wait: float,
        mode: str | None,
        where: Where,
        *,
        effort: str | None = None,
        deep_think: bool = False,
        outputs_dir: str | None = None,
        research: bool = False,
        research_answers: str | None = None,
    ) -> CallToolResult:
        bridge = get_bridge()
        job = await bridge.start_job(
            provider,
            question,
            new_chat=new_chat,
            timeout=timeout,
            files=files,
            mode=mode,
            **where,
            effort=effort,
            deep_think=deep_think,
            outputs_dir=outputs_dir,
            research=research,
            research_answers=research_answers,
        )
        if research:
            return _job_result(await _wait_until_researching(bridge, job, max_wait, ctx))
        return _job_result(await _wait_for_job(bridge, job, max_wait, ctx))

    # ChatGPT's tool takes an effort, Gemini's Deep Think (docs/sites.md#effort).
    chosen = ask_chatgpt if provider == "chatgpt" else ask_gemini
    # The tool's name, and its schema's title (<name>Arguments): the function's name.
    chosen.__name__ = chosen.__qualname__ = f"ask_{provider}_web"
    return chosen


def _where(
    conversation: str | None, project: str | None, gpt: str | None, gem: str | None, temporary: bool
) -> Where:
    """The place parameters of an ask tool, as the facade takes them (docs/sites.md#where)."""
    return {
        "conversation": conversation,
        "project": project,
        "gpt": gpt,
        "gem": gem,
        "temporary": temporary,
    }


def _register_ask_both(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    @tool(server)
    async def ask_chatgpt_gemini_web(
        question: Question,
        ctx: Context,
        new_chat: NewChat = False,
        timeout: Timeout = None,
        files: Files = None,
        max_wait: MaxWait = DEFAULT_MAX_WAIT_S,
        chatgpt_mode: Mode = None,
        gemini_mode: Mode = None,
        chatgpt_conversation: Conversation = None,
        gemini_conversation: Conversation = None,
        project: Project = None,
        gpt: Gpt = None,
        gem: Gem = None,
        temporary: Temporary = False,
        chatgpt_effort: Effort = None,
        gemini_deep_think: DeepThink = False,
        outputs_dir: OutputsDir = None,
        research: Research = False,
        chatgpt_research_answers: ResearchAnswers = None,
        gemini_research_answers: ResearchAnswers = None,
    ) -> CallToolResult:
        """Ask ChatGPT and Gemini at once (recommended default) and return both answers.

        Each side's answer or error is reported separately: one side failing never hides
        the other's answer. The call is an error only when both sides fail. A side not done
        within max_wait seconds comes back as its job: collect it with get_answer. With
        research, each side comes back as its job as soon as its question is sent (a side
        that does not offer Deep Research as its research_unavailable error, nothing sent).
        """
        bridge = get_bridge()
        started = asyncio.get_running_loop().time()
        attachments = await bridge.read_files(files)  # once for both, before either asks
        folder = bridge.outputs_dir(outputs_dir)  # refused before either side asks
        modes = {"chatgpt": chatgpt_mode, "gemini": gemini_mode}
        conversations = {"chatgpt": chatgpt_conversation, "gemini": gemini_conversation}
        where: dict[Provider, Where] = {
            p: {
                "conversation": conversations[p],
                "project": project if p == "chatgpt" else None,
                "gpt": gpt if p == "chatgpt" else None,
                "gem": gem if p == "gemini" else None,
                "temporary": temporary,
            }
            for p in PROVIDER_ORDER
        }
        answers = {"chatgpt": chatgpt_research_answers, "gemini": gemini_research_answers}
        for provider in PROVIDER_ORDER:  # both sides' forms, before either side asks
            bridge.check_where(provider, new_chat=new_chat, **where[provider])
            bridge.check_research(research, answers[provider], temporary)
        jobs = [
            await bridge.start_job(
                provider,
                question,
                new_chat=new_chat,
                timeout=timeout,
                files=attachments,
                mode=modes[provider],
                **where[provider],
                effort=chatgpt_effort if provider == "chatgpt" else None,
                deep_think=gemini_deep_think and provider == "gemini",
                outputs_dir=folder,
                research=research,
                research_answers=answers[provider],
            )
            for provider in PROVIDER_ORDER
        ]
        # One job per side: whichever is done comes back now, the other as its job; a
        # research side as soon as its question is sent (docs/sites.md#research).
        wait = _wait_until_researching if research else _wait_for_job
        ended = await asyncio.gather(*(wait(bridge, j, max_wait, ctx) for j in jobs))
        parts = []
        generated: list[dict[str, Any]] = []
        data: dict[str, Any] = {
            "wall_ms": round((asyncio.get_running_loop().time() - started) * 1000, 1)
        }
        for job in ended:
            title = PROVIDER_TITLES[job.provider]
            if job.status == "done" and job.result is not None:
                parts.append(f"## {title}\n\n{job.result.get('answer', '')}")
                data[job.provider] = {**job.result, "job": job.id}
                generated += outputs_of(job.result)
            elif job.status == "failed":
                code, message = _job_error(job)
                parts.append(f"## {title}\n\n(error [{code}]: {message})")
                data[job.provider] = {"error": {"code": code, "message": message}, "job": job.id}
            else:
                parts.append(f"## {title}\n\n({_pending_text(job)})")
                data[job.provider] = job.progress()
        failed = all(job.status == "failed" for job in ended)
        result = text_result("\n\n".join(parts), data, is_error=failed)
        result.content.extend(output_contents(generated))  # docs/mcp.md#outputs
        return result


def _register_job_tools(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    """Collecting answers that took longer than a call (docs/flows.md#jobs)."""

    @tool(server)
    async def get_answer(
        job: Annotated[
            str, Field(description="The job id an ask returned (or one from list_jobs).")
        ],
        ctx: Context,
        wait: Annotated[
            float,
            Field(
                description="Seconds to wait for the answer if it is not done yet (default 50, "
                "below the 60 s many clients allow a call; 0 only looks).",
                ge=0,
                le=MAX_WAIT_LIMIT_S,
            ),
        ] = DEFAULT_MAX_WAIT_S,
    ) -> CallToolResult:
        """The answer of a job an ask returned: the same result as the ask's when it is done,
        its error when it failed, or its progress (call again) while it is still coming.

        Works after bridge or the browser restarted: the answer is then read from its
        conversation, which the site finished meanwhile.
        """
        found = await get_bridge().wait_job(job, wait, on_progress=_progress_reporter(ctx))
        return _job_result(found)

    @tool(server)
    async def list_jobs(
        limit: Annotated[
            int, Field(description="How many of the newest jobs to list.", ge=1, le=200)
        ] = 20,
    ) -> CallToolResult:
        """The recent jobs (asks whose answers took longer than a call), newest first: id,
        provider, the question's start, status, conversation url, created and updated."""
        jobs, unreadable = await get_bridge().list_jobs(limit)
        lines = [
            f"{j.id}  {j.status:<7}  {j.provider:<7}  {j.summary()['question']}"
            + (f"  {j.url}" if j.url else "")
            for j in jobs
        ]
        lines += [f"(unreadable: {problem})" for problem in unreadable]
        data: dict[str, Any] = {"jobs": [j.summary() for j in jobs]}
        if unreadable:
            data["unreadable"] = [
                {"file": str(problem.path), "error": str(problem)} for problem in unreadable
            ]
        return text_result("\n".join(lines) or "no jobs yet", data)


def _register_diagnosis_tools(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    """What a provider tab (or any tab) shows, for when an answer looks wrong."""

    @tool(server)
    async def take_cdp_snapshot(target: Target = "chatgpt") -> CallToolResult:
        """What a tab shows: its accessibility outline (roles and names) and a screenshot."""
        shot = await take_snapshot(get_bridge(), target)  # the one path (bridge snapshot too)
        return CallToolResult(
            content=[
                TextContent(type="text", text=f"url: {shot.url}\n\n{shot.outline}"),
                Image(data=shot.image, format=shot.image_format).to_image_content(),
            ]
        )

    @tool(server)
    async def get_page_dom(
        target: Target = "chatgpt",
        selector: Annotated[
            str, Field(description="CSS selector; shadow roots are searched too.")
        ] = "body",
        max_chars: Annotated[
            int, Field(description="Trim the HTML to this many characters.", ge=100, le=200_000)
        ] = 20_000,
    ) -> dict[str, Any]:
        """The elements matching a CSS selector in a tab, piercing open shadow roots."""
        return await dom_matches(
            await resolve_target(get_bridge(), target), selector, max_chars=max_chars
        )


ProviderName = Annotated[Provider, Field(description="'chatgpt' or 'gemini'.")]


def _register_conversation_tools(server: MCPServer, get_bridge: Callable[[], Bridge]) -> None:
    """Reading conversations (docs/sites.md#conversations): whole ones, and the list."""

    @tool(server)
    async def get_conversation(
        provider: ProviderName,
        url: Annotated[
            str | None,
            Field(
                description="A conversation URL (https://chatgpt.com/c/<id>, "
                "https://gemini.google.com/app/<id>; list_conversations gives them). "
                "Omitted: this project's conversation, the one the ask tools continue."
            ),
        ] = None,
    ) -> CallToolResult:
        """Every turn of a ChatGPT or Gemini conversation, in order, as markdown.

        The text result is the transcript (a heading per turn); the structured result has
        each turn's role, markdown and complete, the url, and which source was read
        ("network": the site's own data, checked against the page; "dom": the rendered
        page). complete is false for an answer still being written when it was read (its
        heading says "incomplete"): its text is partial, so read again once it has finished.
        """
        conversation = await get_bridge().get_conversation(provider, url)
        return text_result(conversation.transcript(), conversation.to_dict())

    @tool(server)
    async def list_conversations(provider: ProviderName) -> CallToolResult:
        """The recent ChatGPT or Gemini conversations the site lists: title and url of each,
        newest first as the site orders them. Pass a url to get_conversation to read one."""
        listed = await get_bridge().list_conversations(provider)
        return text_result(listed.text(), listed.to_dict())


async def _wait_for_job(bridge: Bridge, job: Job, max_wait: float, ctx: Context) -> Job:
    """An ask's job after ``max_wait`` seconds at most. A call cancelled while it waits
    (its client gave up before it had the job id) stops the answer: nobody could collect
    it, and the tab is left ready for the next question."""
    try:
        return await bridge.wait_job(job.id, max_wait, on_progress=_progress_reporter(ctx))
    except asyncio.CancelledError:
        bridge.cancel_job(job.id)
        raise


async def _wait_until_researching(bridge: Bridge, job: Job, max_wait: float, ctx: Context) -> Job:
    """A Deep Research job returned as soon as its question is sent with research on (its
    progress says "research"), or sooner when it ends (a refusal such as
    research_unavailable, with nothing sent), or after ``max_wait``. The job goes on: its
    report is collected with get_answer (docs/sites.md#research)."""
    sent = asyncio.Event()
    report = _progress_reporter(ctx)

    async def on_progress(progress: Progress) -> None:
        if progress.phase == "research":
            sent.set()
        await report(progress)

    waiting = asyncio.ensure_future(bridge.wait_job(job.id, max_wait, on_progress=on_progress))
    gate = asyncio.ensure_future(sent.wait())
    try:
        await asyncio.wait({waiting, gate}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        bridge.cancel_job(job.id)
        raise
    finally:
        gate.cancel()
        if not waiting.done():
            waiting.cancel()  # the wait only: the job runs on
    if waiting.done() and not waiting.cancelled():
        return waiting.result()
    return await bridge.wait_job(job.id, 0)  # the record as it is now, its URL included


def _job_error(job: Job) -> tuple[str, str]:
    error = job.error or {}
    return str(error.get("code", "bridge_error")), str(error.get("message", "(no message)"))


def _pending_text(job: Job) -> str:
    title = PROVIDER_TITLES[job.provider]
    if job.research:
        where = f" The conversation: {job.url}" if job.url else ""
        return (
            f"{title} Deep Research is running ({job.phase}, {job.elapsed_s():.0f} s); reports "
            f'take many minutes. Call get_answer with job="{job.id}" to collect the report '
            f"(call it again while it says it is running).{where}"
        )
    chars = f", {job.chars} characters so far" if job.chars else ""
    where = f" The conversation: {job.url}" if job.url else ""
    return (
        f"{title} is still answering ({job.phase}, {job.elapsed_s():.0f} s{chars}). Call "
        f'get_answer with job="{job.id}" to wait for the answer (call it again while it '
        f"says it is still answering).{where}"
    )


def _job_result(job: Job) -> CallToolResult:
    """A job as a tool result: the ask's own result when done (plus ``job``), its typed
    error when failed, else its progress with what to call next."""
    if job.status == "done" and job.result is not None:
        result = text_result(str(job.result.get("answer", "")), {**job.result, "job": job.id})
        # What the answer generated (docs/mcp.md#outputs): images inline, files as links.
        result.content.extend(output_contents(outputs_of(job.result)))
        return result
    if job.status == "failed":
        code, message = _job_error(job)
        data = {"job": job.id, "error": {"code": code, "message": message}}
        return text_result(f"[{code}] {message}", data, is_error=True)
    return text_result(_pending_text(job), job.progress())


def _progress_reporter(ctx: Context) -> Callable[[Progress], Any]:
    """Progress notifications (elapsed seconds, characters so far) keep idle clients patient."""

    async def report(progress: Progress) -> None:
        try:
            await ctx.report_progress(
                round(progress.elapsed_s, 2),
                None,
                f"{progress.provider}: {progress.phase}"
                + (f", {progress.chars} characters so far" if progress.chars else ""),
            )
        except Exception:  # a client that went away must not break the ask
            return

    return report

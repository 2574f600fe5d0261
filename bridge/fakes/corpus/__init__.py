"""A corpus of answers shaped like ChatGPT's and Gemini's: what the fake sites answer with
(``bridge.fakes.behaviour.chosen_answer`` picks one for each question), and the
markdown-fidelity tests' material.

Each ``NN-slug.md`` file here is one answer: a first line ``<!-- question: … -->`` naming the
question it answers, then the answer's markdown exactly. Together they cover what the sites'
answers contain (fenced code in many languages, GFM tables, nested and task lists, quotes,
headings, inline styles, links and images, LaTeX math, rules, entities, emoji, Japanese, very
short answers, and the questions the scenario catalogue, the demo and the tests ask), so a
reader of the answer (the network parsers of ``bridge.providers.streams``, the DOM
extraction) can be held to reproduce each one. Two very long answers (over 50 000 characters)
are generated here from varied pieces instead of being stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["CorpusAnswer", "corpus"]

_FILE = re.compile(r"^\d{2}-[a-z0-9-]+\.md$")
_QUESTION = re.compile(r"\A<!-- question: (?P<question>.+?) -->\n")


@dataclass(frozen=True)
class CorpusAnswer:
    """One answer: its name (the file's, without ``.md``), the question, the markdown."""

    name: str
    question: str
    markdown: str


def corpus() -> list[CorpusAnswer]:
    """Every answer, sorted by name."""
    return list(_corpus())


@cache
def _corpus() -> tuple[CorpusAnswer, ...]:
    answers = [_read(entry.name) for entry in resources.files(__name__).iterdir()]
    found = [answer for answer in answers if answer is not None]
    found.extend(_generated())
    return tuple(sorted(found, key=lambda answer: answer.name))


def _read(filename: str) -> CorpusAnswer | None:
    if not _FILE.match(filename):
        return None
    # Bytes, not text mode: the markdown is kept exactly, line ends included.
    text = resources.files(__name__).joinpath(filename).read_bytes().decode("utf-8")
    match = _QUESTION.match(text)
    if match is None:
        raise ValueError(f"{filename} does not start with <!-- question: ... -->")
    return CorpusAnswer(filename.removesuffix(".md"), match["question"], text[match.end() :])


# -- the generated long answers -----------------------------------------------------------

_TOPICS = [
    ("caching", "Redis", "cache hit ratio"),
    ("rate limiting", "a token bucket", "requests per second"),
    ("database indexing", "PostgreSQL", "query latency"),
    ("message queues", "RabbitMQ", "queue depth"),
    ("observability", "OpenTelemetry", "trace coverage"),
    ("feature flags", "a flag service", "rollout percentage"),
    ("schema migrations", "Alembic", "migration time"),
    ("authentication", "OAuth 2.0", "token lifetime"),
    ("secrets management", "Vault", "rotation period"),
    ("load balancing", "Envoy", "p99 latency"),
    ("retries and backoff", "exponential backoff", "retry budget"),
    ("idempotency keys", "a dedupe table", "duplicate rate"),
    ("pagination", "keyset pagination", "page size"),
    ("background jobs", "Celery", "job throughput"),
    ("search", "OpenSearch", "recall"),
    ("file uploads", "S3 presigned URLs", "upload size"),
    ("CI pipelines", "GitHub Actions", "build minutes"),
    ("code review", "pull requests", "review turnaround"),
    ("incident response", "an on-call rota", "time to mitigate"),
    ("capacity planning", "load tests", "headroom"),
    ("data retention", "partitioned tables", "storage growth"),
    ("API versioning", "URL versions", "clients on old versions"),
    ("circuit breakers", "a breaker library", "error rate"),
    ("connection pooling", "PgBouncer", "pool saturation"),
    ("blue-green deploys", "two environments", "switch-over time"),
]

_LANGUAGES = ["python", "javascript", "go", "rust", "sql", "bash"]


def _snake(words: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", words.lower()).strip("_")


def _code(language: str, topic: str, tool: str, number: int) -> str:
    name = _snake(topic)
    if language == "python":
        body = (
            f"def check_{name}(limit: int = {number * 10}) -> bool:\n"
            f'    """Return True when {topic} is within its budget."""\n'
            f"    current = measure({tool!r})\n"
            f"    return current <= limit\n"
        )
    elif language == "javascript":
        body = (
            f"export async function {name.replace('_', '')}Status() {{\n"
            f"  const res = await fetch(`/api/{name}?window=${{{number}}}m`);\n"
            f"  if (!res.ok) throw new Error(`{topic} check failed: ${{res.status}}`);\n"
            f"  return res.json();\n}}\n"
        )
    elif language == "go":
        body = (
            f"func Check{name.title().replace('_', '')}(ctx context.Context) error {{\n"
            f"\tctx, cancel := context.WithTimeout(ctx, {number}*time.Second)\n"
            f"\tdefer cancel()\n"
            f'\treturn probe(ctx, "{tool}")\n}}\n'
        )
    elif language == "rust":
        body = (
            f"pub fn {name}_ok(samples: &[u64]) -> bool {{\n"
            f"    let worst = samples.iter().copied().max().unwrap_or(0);\n"
            f"    worst < {number * 100} // budget for {topic}\n}}\n"
        )
    elif language == "sql":
        body = (
            f"-- {topic}: the last {number} days\n"
            f"SELECT date_trunc('day', created_at) AS day, count(*) AS events\n"
            f"FROM {name}_events\n"
            f"WHERE created_at > now() - interval '{number} days'\n"
            f"GROUP BY 1\nORDER BY 1;\n"
        )
    else:
        body = (
            f"#!/usr/bin/env bash\nset -euo pipefail\n"
            f'echo "checking {topic} with {tool}..."\n'
            f'curl -fsS "http://localhost:8080/{name}" | jq ".{name} | length > {number}"\n'
        )
    return f"```{language}\n{body}```"


def _section(index: int, part: int) -> str:
    topic, tool, metric = _TOPICS[index % len(_TOPICS)]
    number = 3 + (index * 7 + part * 5) % 17
    kind = (index + part) % 6
    title = f"## {part}.{index + 1} {topic.capitalize()}"
    intro = (
        f"Teams usually reach for **{tool}** when they need {topic}. The number to watch "
        f"is the *{metric}*; in our services it should stay below {number * 10} under normal "
        f"load, and an alert fires when it does not for {number} minutes in a row."
    )
    if kind == 0:
        body = (
            f"{intro}\n\n- Measure the {metric} before changing anything.\n"
            f"- Change one thing at a time, and write down why.\n"
            f"  - Keep the old setting for {number} days so you can roll back.\n"
            f"  - Link the change to its ticket, e.g. `OPS-{1000 + index * 13}`.\n"
            f"- Review the result in the weekly meeting."
        )
    elif kind == 1:
        language = _LANGUAGES[(index // 6 + part) % len(_LANGUAGES)]
        body = (
            f"{intro}\n\nA small check we run in CI:\n\n{_code(language, topic, tool, number)}\n\n"
            f"The check is deliberately boring: it fails loudly, and the message names the "
            f"{metric} so whoever is on call knows where to look."
        )
    elif kind == 2:
        body = (
            f"{intro}\n\n| Setting | Default | Ours | Why |\n|:---|---:|---:|:---|\n"
            f"| timeout (s) | 30 | {number} | fail fast |\n"
            f"| retries | 0 | {number % 4 + 1} | transient errors |\n"
            f"| `max_{_snake(metric)}` | — | {number * 10} | alert threshold |\n"
            f"| owner | — | team-{chr(97 + index % 26)} | `CODEOWNERS` \\| on-call |"
        )
    elif kind == 3:
        body = (
            f"> **Lesson from incident #{200 + index}:** {topic} failed quietly for "
            f"{number} hours before anyone noticed.\n>\n"
            f"> > The dashboard showed the {metric}, but nobody was paged.\n\n"
            f"What we do now:\n\n1. Page on the {metric}, not on CPU.\n"
            f"2. Run a game day every {number} weeks.\n3. Keep the runbook next to the alert."
        )
    elif kind == 4:
        body = (
            f"{intro}\n\nWith $\\lambda$ requests per second, each spending $W$ seconds in "
            f"the system, Little's law gives the average concurrency $L = \\lambda W$, so for "
            f"$\\lambda = {number * 50}$ and $W = 0.{number:02d}$:\n\n"
            f"$$\nL = {number * 50} \\times 0.{number:02d} \\approx "
            f"{number * 50 * number / 100:.1f}\n$$\n\n"
            f"Size pools and queues from $L$, with headroom of at least ~~10%~~ **25%**."
        )
    else:
        body = (
            f"{intro}\n\n- [x] Owner named for {topic}\n- [x] Dashboard for the {metric}\n"
            f"- [ ] Runbook reviewed this quarter\n- [ ] Load test at {number}× traffic\n\n"
            f"See also [the {tool} docs](https://example.com/docs/{_snake(tool)}) and "
            f"<https://example.com/runbooks/{_snake(topic)}>."
        )
    return f"{title}\n\n{body}"


def _long_handbook() -> str:
    blocks = [
        "# Backend engineering handbook\n\nThis handbook collects how our backend teams "
        "build, ship and run services. Each chapter takes the same topics from a different "
        "angle: first *how to build it*, then *how to run it*, then *how to change it safely*."
    ]
    part = 0
    while sum(len(block) + 2 for block in blocks) < 60_000:
        part += 1
        chapter = ["Building", "Running", "Changing safely", "Measuring", "Scaling"][(part - 1) % 5]
        blocks.append(f"---\n\n# Part {part}: {chapter}")
        blocks.extend(_section(index, part) for index in range(len(_TOPICS)))
    blocks.append("That's the whole handbook. Questions go to `#backend-handbook`. 🙌")
    return "\n\n".join(blocks)


_JA_TOPICS = [
    ("キャッシュ", "Redis", "ヒット率"),
    ("レート制限", "トークンバケット", "秒間リクエスト数"),
    ("インデックス設計", "PostgreSQL", "クエリ遅延"),
    ("メッセージキュー", "RabbitMQ", "キューの長さ"),
    ("可観測性", "OpenTelemetry", "トレースの網羅率"),
    ("認証", "OAuth 2.0", "トークンの有効期限"),
    ("シークレット管理", "Vault", "ローテーション周期"),
    ("負荷分散", "Envoy", "p99 レイテンシ"),
    ("リトライ", "指数バックオフ", "リトライ予算"),
    ("ページネーション", "キーセット方式", "ページサイズ"),
    ("バックグラウンドジョブ", "Celery", "処理件数"),
    ("全文検索", "OpenSearch", "再現率"),
    ("CI パイプライン", "GitHub Actions", "ビルド時間"),
    ("障害対応", "オンコール体制", "復旧までの時間"),
    ("容量計画", "負荷試験", "余裕率"),
    ("API のバージョン管理", "URL バージョン", "旧バージョンの利用者数"),
    ("サーキットブレーカー", "ブレーカーライブラリ", "エラー率"),
]


def _ja_section(index: int, part: int) -> str:
    topic, tool, metric = _JA_TOPICS[index % len(_JA_TOPICS)]
    number = 2 + (index * 5 + part) % 13
    kind = (index + part) % 5
    title = f"### {part}-{index + 1}. {topic}"
    intro = (
        f"{topic}では、まず**{tool}**の導入を検討します。見るべき指標は「{metric}」で、"
        f"通常時は{number * 10}以下に保ち、{number}分間続けて超えたらアラートを出します。"
        f"数値は第{part}部の前提に合わせて調整してください。"
    )
    if kind == 0:
        body = (
            f"{intro}\n\n- 変更の前に{metric}を測る\n- 一度に一つだけ変える\n"
            f"  - 元の設定は{number}日間残しておく\n"
            f"    1. ロールバック手順を書く\n    2. チケット `OPS-{2000 + index}` に記録する\n"
            f"- 週次の定例で結果を共有する"
        )
    elif kind == 1:
        language = _LANGUAGES[(index + part) % len(_LANGUAGES)]
        code = _code(language, f"topic {index}", tool if tool.isascii() else "tool", number)
        body = (
            f"{intro}\n\nCI で実行している簡単なチェックです：\n\n{code}\n\n"
            f"失敗したときのメッセージに{metric}が含まれるので、担当者がすぐに原因を追えます。"
        )
    elif kind == 2:
        body = (
            f"{intro}\n\n| 設定 | 既定値 | 当社の値 | 理由 |\n|:---|---:|---:|:---|\n"
            f"| タイムアウト（秒） | 30 | {number} | 早めに失敗させる |\n"
            f"| リトライ回数 | 0 | {number % 4 + 1} | 一時的なエラー対策 |\n"
            f"| 担当 | — | チーム{chr(0x30A2 + 2 * (index % 10))} | `CODEOWNERS` を参照 |"
        )
    elif kind == 3:
        body = (
            f"> **障害 #{300 + index} の教訓：** {topic}の不具合に"
            f"{number}時間気づきませんでした。\n"
            f">\n> > ダッシュボードには{metric}が出ていたのに、誰にも通知されなかったのです。\n\n"
            f"それ以来、次のルールを守っています。\n\n1. CPU ではなく{metric}で通知する\n"
            f"2. {number}週間ごとに障害訓練を行う\n3. 手順書をアラートの隣に置く"
        )
    else:
        body = (
            f"{intro}\n\n到着率を $\\lambda$、処理時間を $W$ とすると、リトルの法則より "
            f"平均同時処理数は $L = \\lambda W$ です。たとえば $\\lambda = {number * 40}$、"
            f"$W = 0.{number:02d}$ なら\n\n$$\nL = {number * 40} \\times 0.{number:02d}\n$$\n\n"
            f"となります。プールやキューの大きさは、この $L$ に ~~10%~~ **25%** 以上の余裕を"
            f"持たせて決めましょう 🚀"
        )
    return f"{title}\n\n{body}"


def _long_japanese() -> str:
    blocks = [
        "# バックエンド開発ガイド（完全版）\n\nこのガイドでは、バックエンドのサービスを"
        "「作る」「動かす」「安全に変える」ための考え方を、トピックごとに詳しく説明します。"
    ]
    part = 0
    while sum(len(block) + 2 for block in blocks) < 55_000:
        part += 1
        chapter = ["設計", "運用", "変更管理", "計測", "拡張"][(part - 1) % 5]
        blocks.append(f"***\n\n## 第{part}部：{chapter}")
        blocks.extend(_ja_section(index, part) for index in range(len(_JA_TOPICS)))
    blocks.append("以上です。質問があれば `#backend-guide` チャンネルでどうぞ。")
    return "\n\n".join(blocks)


def _generated() -> list[CorpusAnswer]:
    return [
        CorpusAnswer(
            "45-long-engineering-handbook",
            "Write a complete engineering handbook for a backend team, covering every topic "
            "in detail",
            _long_handbook(),
        ),
        CorpusAnswer(
            "46-long-japanese-handbook",
            "バックエンド開発の完全なガイドを、すべてのトピックについて詳しく書いてください",
            _long_japanese(),
        ),
    ]

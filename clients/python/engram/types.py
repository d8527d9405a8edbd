"""Typed views of engram's JSON answers.

Every dataclass keeps the fields the v1 contract documents; fields the
server adds later are kept, untouched, in ``extra`` so an older client
never drops what a newer server says.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Type, TypeVar

T = TypeVar("T")


def from_json(cls: Type[T], data: Dict[str, Any]) -> T:
    """Builds cls from a JSON object: known fields typed (nested
    dataclasses and lists of them included), the rest in ``extra``."""
    hints = typing.get_type_hints(cls)
    kwargs: Dict[str, Any] = {}
    extra: Dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for name, value in data.items():
        if name not in names or name == "extra":
            extra[name] = value
            continue
        kwargs[name] = _convert(hints[name], value)
    if "extra" in names:
        kwargs["extra"] = extra
    return cls(**kwargs)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union:  # Optional[X]
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin in (list, List) and args and isinstance(value, list):
        return [_convert(args[0], v) for v in value]
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return from_json(hint, value)
    return value


@dataclass
class Memory:
    """An L2 memory (GET /v1/memories/{id})."""

    id: str
    category: str = ""
    content: str = ""
    key: Optional[str] = None
    agent_id: Optional[str] = None
    subcategory: Optional[str] = None
    type: Optional[str] = None
    tags: List[str] = field(default_factory=list)
    data: Any = None
    summary: Optional[str] = None
    source: Any = None
    importance: float = 0.0
    confidence: float = 0.0
    priority: str = ""
    reward: float = 0.0
    up_count: int = 0
    down_count: int = 0
    needs_revision: bool = False
    stability: float = 0.0
    token_count: int = 0
    valid: bool = True
    archived: bool = False
    version: int = 0
    created_at: str = ""
    updated_at: str = ""
    expires_at: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class CreateResult:
    """What POST /v1/memories answers: the memory, and whether the same
    content was already live (then it is the existing memory)."""

    memory: Memory
    deduplicated: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class MemoryPage:
    """One page of GET /v1/memories; pass next_cursor back for the next."""

    items: List[Memory] = field(default_factory=list)
    next_cursor: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Domain:
    name: str
    score: float


@dataclass
class Route:
    """What the query router makes of a query (POST /v1/route)."""

    intent: str
    mode: str
    domains: List[Domain] = field(default_factory=list)
    categories: List[str] = field(default_factory=list)
    layers: List[str] = field(default_factory=list)
    identity: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RecallItem:
    """One injected memory, in injection order, with its score and the
    score's breakdown (relevance, reward, confidence, retention, …)."""

    id: str
    category: str
    text: str
    tokens: int
    score: float
    key: Optional[str] = None
    version: int = 0
    used_summary: bool = False
    breakdown: Dict[str, float] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Recall:
    """A budgeted recall (POST /v1/recall): ``context`` is the text to put
    into the prompt; ``recall_id`` credits later feedback."""

    recall_id: str
    context: str
    tokens_used: int
    token_budget: int
    route: Optional[Route] = None
    items: List[RecallItem] = field(default_factory=list)
    query: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Interaction:
    """One answer a product gave (POST /v1/interactions)."""

    interaction_id: str
    group_key: str = ""
    prompt: Any = None
    response: str = ""
    created_at: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Credit:
    """What one feedback did to one memory it credited."""

    id: str
    version: int
    weight: float
    reward: float
    confidence: float
    stability: float
    needs_revision: bool = False
    up_count: int = 0
    down_count: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class FeedbackResult:
    """What POST /v1/feedback answers; ``replayed`` is true when the
    idempotency key had been seen and nothing changed again."""

    feedback_id: str
    signal: float
    credited: List[Credit] = field(default_factory=list)
    pairs: List[str] = field(default_factory=list)
    replayed: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class FeedbackStatus:
    """A feedback acknowledged asynchronously (``Prefer: respond-async``,
    202) or read back (GET /v1/feedback/{id}): ``status`` is "pending"
    until a server applied it, then "applied" with ``result``."""

    feedback_id: str
    status: str
    credits: List[str] = field(default_factory=list)
    result: Optional[FeedbackResult] = None
    replayed: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ReflectOutcome:
    """What the reflector did to one group."""

    group: str
    id: str = ""
    version: int = 0
    writer: str = ""
    reason: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ReflectResult:
    """What a reflect did: groups written, skipped (unchanged), failed."""

    groups: int = 0
    written: List[ReflectOutcome] = field(default_factory=list)
    skipped: List[ReflectOutcome] = field(default_factory=list)
    failed: List[ReflectOutcome] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class SleepResult:
    """What one sleep cycle did (POST /v1/sleep)."""

    merged: int = 0
    archived: int = 0
    expired: int = 0
    events_folded: int = 0
    event_bytes_before: int = 0
    event_bytes_after: int = 0
    reflect: Optional[ReflectResult] = None
    conflicts: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class JobAccepted:
    """A reflect or sleep queued as a job (202): follow it with
    ``Client.job`` or ``Client.wait_job``."""

    job_id: str
    status: str = "queued"
    status_url: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class JobProgress:
    """Steps done of the total (0 until the job knows it)."""

    done: int = 0
    total: int = 0


@dataclass
class Job:
    """Long work of the tenant (GET /v1/jobs/{id}): ``status`` goes
    queued → running → done (with ``result``, what the request would have
    answered inline) or failed (with ``error``)."""

    id: str
    kind: str
    status: str
    progress: JobProgress = field(default_factory=JobProgress)
    attempts: int = 0
    request: Any = None
    result: Any = None
    error: str = ""
    created_at: str = ""
    started_at: Optional[str] = None
    finished_at: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Done or failed."""
        return self.status in ("done", "failed")


@dataclass
class JobPage:
    """One page of GET /v1/jobs, newest first."""

    items: List[Job] = field(default_factory=list)
    next_cursor: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Link:
    """A named relation from one memory to another (docs/links.md)."""

    from_: str
    to: str
    relation: str
    version: int = 0
    created_at: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


def link_from_json(data: Dict[str, Any]) -> Link:
    """A Link from its JSON (``from`` is a Python keyword)."""
    data = dict(data)
    data["from_"] = data.pop("from")
    return from_json(Link, data)


@dataclass
class Alias:
    """Another key path of a memory that has a key (docs/links.md);
    ``valid`` is false while its target is tombstoned or expired."""

    alias: str
    key: str
    memory_id: str
    version: int = 0
    created_at: str = ""
    valid: bool = True
    user_id: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

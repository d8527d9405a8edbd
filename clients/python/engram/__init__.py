"""engram's Python client: ``Client`` speaks the HTTP API v1 with the
standard library only; refusals raise ``EngramError``."""

from .client import Client
from .errors import EngramError
from .types import (
    Alias,
    Credit,
    CreateResult,
    Domain,
    FeedbackResult,
    FeedbackStatus,
    Interaction,
    Job,
    JobAccepted,
    JobPage,
    JobProgress,
    Link,
    Memory,
    MemoryPage,
    Recall,
    RecallItem,
    ReflectOutcome,
    ReflectResult,
    Route,
    SleepResult,
)

__all__ = [
    "Client",
    "EngramError",
    "Alias",
    "Credit",
    "CreateResult",
    "Domain",
    "FeedbackResult",
    "FeedbackStatus",
    "Interaction",
    "Job",
    "JobAccepted",
    "JobPage",
    "JobProgress",
    "Link",
    "Memory",
    "MemoryPage",
    "Recall",
    "RecallItem",
    "ReflectOutcome",
    "ReflectResult",
    "Route",
    "SleepResult",
]

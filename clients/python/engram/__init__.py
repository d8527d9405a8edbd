"""engram's Python client: ``Client`` speaks the HTTP API v1 with the
standard library only; refusals raise ``EngramError``."""

from .client import Client
from .errors import EngramError
from .types import (
    Credit,
    CreateResult,
    Domain,
    FeedbackResult,
    Interaction,
    Memory,
    MemoryPage,
    Recall,
    RecallItem,
    Route,
)

__all__ = [
    "Client",
    "EngramError",
    "Credit",
    "CreateResult",
    "Domain",
    "FeedbackResult",
    "Interaction",
    "Memory",
    "MemoryPage",
    "Recall",
    "RecallItem",
    "Route",
]

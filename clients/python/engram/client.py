"""A synchronous client for engram's HTTP API v1, standard library only."""

from __future__ import annotations

import email.utils
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from .errors import EngramError
from .types import (
    Alias,
    CreateResult,
    FeedbackResult,
    FeedbackStatus,
    Interaction,
    Job,
    JobAccepted,
    JobPage,
    Link,
    Memory,
    MemoryPage,
    Recall,
    ReflectResult,
    Route,
    SleepResult,
    from_json,
    link_from_json,
)

#: Statuses worth another try: the server asked the client to slow down
#: (429) or was briefly unavailable (503). Nothing was written.
RETRY_STATUSES = (429, 503)

Prompt = Union[str, List[Dict[str, str]]]


class Client:
    """engram's API v1.

    ``url`` and ``api_key`` default to the ENGRAM_URL and ENGRAM_API_KEY
    environment variables. A 429 or 503 is tried again up to
    ``max_retries`` times, after the ``Retry-After`` the server sent
    (seconds or an HTTP date, at most ``max_retry_wait``), else after an
    exponential back-off from ``backoff`` seconds. Every other refusal
    raises :class:`EngramError` with engram's code and message.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_retry_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        url = url or os.environ.get("ENGRAM_URL") or "http://127.0.0.1:8080"
        self.url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("ENGRAM_API_KEY", "")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self._sleep = sleep

    # -- transport -----------------------------------------------------

    def _open(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
    ):
        """Sends one request, retrying 429 and 503, and returns the open
        response of a 2xx answer."""
        target = self.url + path
        params = {k: _param(v) for k, v in (query or {}).items() if v is not None}
        if params:
            target += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            req = urllib.request.Request(target, data=data, method=method)
            req.add_header("Accept", "application/json")
            req.add_header("User-Agent", "engram-python/1")
            if self.api_key:
                req.add_header("Authorization", "Bearer " + self.api_key)
            if data is not None:
                req.add_header("Content-Type", "application/json")
            for name, value in (headers or {}).items():
                req.add_header(name, value)
            try:
                return urllib.request.urlopen(req, timeout=self.timeout)
            except urllib.error.HTTPError as err:
                if err.code in RETRY_STATUSES and attempt < self.max_retries:
                    wait = self._retry_wait(err.headers.get("Retry-After"), attempt)
                    err.close()
                    self._sleep(wait)
                    attempt += 1
                    continue
                raise _error_from(err) from None

    def _retry_wait(self, header: Optional[str], attempt: int) -> float:
        wait = self.backoff * (2**attempt)
        if header:
            header = header.strip()
            if header.isdigit():
                wait = float(header)
            else:
                try:
                    when = email.utils.parsedate_to_datetime(header)
                    wait = max(0.0, when.timestamp() - time.time())
                except (TypeError, ValueError):
                    pass
        return min(wait, self.max_retry_wait)

    def _json(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> Any:
        with self._open(method, path, body, query, headers) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    # -- memories (L2) ---------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        category: Optional[str] = None,
        tags: Optional[List[str]] = None,
        **fields: Any,
    ) -> CreateResult:
        """Creates an L2 memory (POST /v1/memories). The same content
        again answers the existing memory with ``deduplicated`` true.
        Other fields (summary, importance, priority, type, agent_id,
        source, data, expires_at, …) pass through as keyword arguments."""
        body: Dict[str, Any] = {"content": content, **fields}
        if category is not None:
            body["category"] = category
        if tags is not None:
            body["tags"] = tags
        return from_json(CreateResult, self._json("POST", "/v1/memories", body))

    def get_memory(self, memory_id: str) -> Memory:
        """One memory, tombstoned ones too (``valid`` false)."""
        return from_json(Memory, self._json("GET", "/v1/memories/" + _segment(memory_id)))

    def list_memories(self, **filters: Any) -> MemoryPage:
        """One page, newest first. Filters: category, tag, q,
        needs_revision, quarantined, key_prefix, agent_id, include_deleted,
        include_archived, limit, cursor."""
        return from_json(MemoryPage, self._json("GET", "/v1/memories", query=filters))

    def iter_memories(self, **filters: Any) -> Iterator[Memory]:
        """Every memory the filters match, page after page."""
        while True:
            page = self.list_memories(**filters)
            yield from page.items
            if not page.next_cursor:
                return
            filters["cursor"] = page.next_cursor

    def update_memory(self, memory_id: str, version: Optional[int] = None, **fields: Any) -> Memory:
        """Changes the fields given (PATCH). With ``version``, a memory
        changed since that version is a ``conflict`` error."""
        body = dict(fields)
        if version is not None:
            body["version"] = version
        return from_json(Memory, self._json("PATCH", "/v1/memories/" + _segment(memory_id), body))

    def forget(self, memory_id: str) -> Memory:
        """Tombstones a memory (its history stays)."""
        return from_json(Memory, self._json("DELETE", "/v1/memories/" + _segment(memory_id)))

    # -- keys (set_memory) -------------------------------------------------

    def set_key(self, key: str, content: Any, source: Any, **fields: Any) -> Memory:
        """set_memory: last write wins; ``content=None`` tombstones."""
        body = {"content": content, "source": source, **fields}
        return from_json(Memory, self._json("PUT", "/v1/keys" + _key_path(key), body))

    def get_key(self, key: str) -> Memory:
        """The live memory at key; ``not_found`` once tombstoned."""
        return from_json(Memory, self._json("GET", "/v1/keys" + _key_path(key)))

    def delete_key(self, key: str) -> Memory:
        """The same as set_key(key, None, …)."""
        return from_json(Memory, self._json("DELETE", "/v1/keys" + _key_path(key)))

    # -- recall ----------------------------------------------------------------

    def route(self, query: str) -> Route:
        """What the router makes of a query: intent, mode, domains."""
        return from_json(Route, self._json("POST", "/v1/route", {"query": query}))

    def recall(self, query: str, token_budget: int = 1000, **options: Any) -> Recall:
        """The memories worth injecting for query within token_budget.
        Options: tags, agent_id, session_id, fill, identity."""
        body = {"query": query, "token_budget": token_budget, **options}
        return from_json(Recall, self._json("POST", "/v1/recall", body))

    def context(self, token_limit: Optional[int] = None, tags: Optional[List[str]] = None) -> str:
        """The default read block, ``[Agent Memory]`` then one line each."""
        out = self._json("GET", "/v1/context", query={"token_limit": token_limit, "tags": tags})
        return out["context"]

    # -- learning ----------------------------------------------------------------

    def log_interaction(self, prompt: Prompt, response: str, **fields: Any) -> Interaction:
        """Records an answer the product gave (prompt text or a list of
        {"role","content"} messages). Fields: recall_id, session_id,
        turn_id, model. Two answers with the same turn_id and different
        feedback make a preference pair."""
        body = {"prompt": prompt, "response": response, **fields}
        return from_json(Interaction, self._json("POST", "/v1/interactions", body))

    def feedback(
        self,
        *,
        interaction_id: Optional[str] = None,
        recall_id: Optional[str] = None,
        memory_id: Optional[str] = None,
        thumb: Optional[str] = None,
        rating: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        respond_async: bool = False,
        **fields: Any,
    ) -> Union[FeedbackResult, FeedbackStatus]:
        """A thumb ("up"/"down") or a 1–5 rating on an interaction, a
        recall or a memory. An idempotency key is generated when none is
        given, so a retried request is never counted twice; pass your own
        to make a resubmission from elsewhere idempotent too. Fields:
        reason, correction, rater.

        With ``respond_async`` the request says ``Prefer: respond-async``:
        the server answers 202 once the feedback is durably queued, with a
        :class:`FeedbackStatus` (``pending``) whose ``feedback_id``
        :meth:`feedback_status` follows. A server with ``feedback.async``
        on answers so to every feedback."""
        body: Dict[str, Any] = dict(fields)
        for name, value in (("interaction_id", interaction_id), ("recall_id", recall_id),
                            ("memory_id", memory_id), ("thumb", thumb), ("rating", rating)):
            if value is not None:
                body[name] = value
        body["idempotency_key"] = idempotency_key or str(uuid.uuid4())
        headers = {"Prefer": "respond-async"} if respond_async else None
        doc = self._json("POST", "/v1/feedback", body, headers=headers)
        if "status" in doc:
            return from_json(FeedbackStatus, doc)
        return from_json(FeedbackResult, doc)

    def feedback_status(self, feedback_id: str) -> FeedbackStatus:
        """A feedback: ``pending`` (queued, not applied yet) or
        ``applied`` with its result (GET /v1/feedback/{id})."""
        return from_json(FeedbackStatus, self._json("GET", "/v1/feedback/" + _segment(feedback_id)))

    def wait_feedback(self, feedback_id: str, timeout: float = 60.0, interval: float = 0.2) -> FeedbackStatus:
        """Reads the feedback's status until it is applied; TimeoutError
        after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.feedback_status(feedback_id)
            if st.status == "applied":
                return st
            if time.monotonic() >= deadline:
                raise TimeoutError("feedback %s still %s after %gs" % (feedback_id, st.status, timeout))
            self._sleep(interval)

    def thumb(self, interaction_id: str, thumb: str, **fields: Any) -> Union[FeedbackResult, FeedbackStatus]:
        """Thumb ("up" or "down") on an interaction."""
        return self.feedback(interaction_id=interaction_id, thumb=thumb, **fields)

    def rate(self, interaction_id: str, rating: int, **fields: Any) -> Union[FeedbackResult, FeedbackStatus]:
        """A 1–5 rating on an interaction."""
        return self.feedback(interaction_id=interaction_id, rating=rating, **fields)

    def export_pairs(self, format: str = "trl", **filters: Any) -> Iterator[Dict[str, Any]]:
        """Streams the tenant's preference data, one dict per JSON line,
        without holding the export in memory. Formats: trl,
        trl-conversational, trl-unpaired, openai. Filters: since, until,
        category, user_id (exactly that end user's), min_margin, cursor,
        limit."""
        with self._open("GET", "/v1/pairs", query={"format": format, **filters}) as resp:
            for line in resp:
                line = line.strip()
                if line:
                    yield json.loads(line)

    # -- reflections, sessions, prompt ---------------------------------------------

    def reflect(self, category: Optional[str] = None) -> Union[ReflectResult, JobAccepted]:
        """Runs the reflector (one category, or all). A small tenant's
        reflect runs in the request: its :class:`ReflectResult`. A tenant
        past the server's ``jobs.inline_max_memories`` gets a
        :class:`JobAccepted` at once; :meth:`wait_job` follows it."""
        doc = self._json("POST", "/v1/reflect", {"category": category} if category else {})
        if "job_id" in doc:
            return from_json(JobAccepted, doc)
        return from_json(ReflectResult, doc)

    def sleep(self) -> Union[SleepResult, JobAccepted]:
        """One sleep cycle of the tenant (merge, archive, expire, fold,
        re-reflect): a :class:`SleepResult`, or a :class:`JobAccepted` on a
        large tenant, as :meth:`reflect`."""
        doc = self._json("POST", "/v1/sleep")
        if "job_id" in doc:
            return from_json(JobAccepted, doc)
        return from_json(SleepResult, doc)

    def job(self, job_id: str) -> Job:
        """One job of the tenant: status, progress, result or error."""
        return from_json(Job, self._json("GET", "/v1/jobs/" + _segment(job_id)))

    def jobs(self, status: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> JobPage:
        """One page of the tenant's jobs, newest first (status: queued,
        running, done, failed)."""
        return from_json(JobPage, self._json("GET", "/v1/jobs", query={"status": status, "limit": limit, "cursor": cursor}))

    def wait_job(self, job: Union[str, JobAccepted, Job], timeout: float = 600.0, interval: float = 0.5) -> Job:
        """Reads the job until it is done or failed and returns it (check
        ``status``; ``result`` holds what the request would have answered
        inline). TimeoutError after ``timeout`` seconds."""
        job_id = job if isinstance(job, str) else job.job_id if isinstance(job, JobAccepted) else job.id
        deadline = time.monotonic() + timeout
        while True:
            j = self.job(job_id)
            if j.finished:
                return j
            if time.monotonic() >= deadline:
                raise TimeoutError("job %s still %s after %gs" % (job_id, j.status, timeout))
            self._sleep(interval)

    # -- links and aliases ---------------------------------------------------------

    def link(self, from_id: str, to_id: str, relation: Optional[str] = None) -> Link:
        """Links memory from_id to to_id (relation: related by default,
        answers, mentions, corrects, …): a new version of from_id. The same
        link again answers the existing one."""
        body: Dict[str, Any] = {"to": to_id}
        if relation is not None:
            body["relation"] = relation
        return link_from_json(self._json("POST", "/v1/memories/" + _segment(from_id) + "/links", body))

    def links(self, memory_id: str) -> List[Link]:
        """The memory's live links, from it and to it, oldest first."""
        doc = self._json("GET", "/v1/memories/" + _segment(memory_id) + "/links")
        return [link_from_json(x) for x in doc["items"]]

    def unlink(self, from_id: str, to_id: str, relation: Optional[str] = None) -> List[Link]:
        """Removes one relation from from_id to to_id, or every relation
        when none is given; answers the links removed (``not_found`` when
        there was none)."""
        path = "/v1/memories/" + _segment(from_id) + "/links/" + _segment(to_id)
        if relation is not None:
            path += "/" + _segment(relation)
        return [link_from_json(x) for x in self._json("DELETE", path)["removed"]]

    def put_alias(self, alias: str, key: str, user_id: Optional[str] = None) -> Alias:
        """Makes alias another path of the live key (the keys routes then
        read, write and delete that memory through it)."""
        body: Dict[str, Any] = {"key": key}
        if user_id is not None:
            body["user_id"] = user_id
        return from_json(Alias, self._json("PUT", "/v1/aliases" + _key_path(alias), body))

    def get_alias(self, alias: str, user_id: Optional[str] = None) -> Alias:
        """One alias; ``valid`` false while its target is tombstoned."""
        return from_json(Alias, self._json("GET", "/v1/aliases" + _key_path(alias), query={"user_id": user_id}))

    def delete_alias(self, alias: str, user_id: Optional[str] = None) -> Alias:
        """Removes the alias (a new version of its target); answers it."""
        return from_json(Alias, self._json("DELETE", "/v1/aliases" + _key_path(alias), query={"user_id": user_id}))

    def aliases(self, memory_id: str) -> List[Alias]:
        """Every alias of the memory, every user's, oldest first."""
        doc = self._json("GET", "/v1/memories/" + _segment(memory_id) + "/aliases")
        return [from_json(Alias, x) for x in doc["items"]]

    def reflections(self, **filters: Any) -> Dict[str, Any]:
        """One page of current reflections: category, user_id (exactly that
        end user's), limit, cursor."""
        return self._json("GET", "/v1/reflections", query=filters)

    def add_events(self, session_id: str, events: List[Dict[str, Any]], resource_id: Optional[str] = None) -> Dict[str, Any]:
        """Appends events to an L1 session (created on its first post);
        a ``message`` event also becomes an L2 episode."""
        body: Dict[str, Any] = {"events": events}
        if resource_id is not None:
            body["resource_id"] = resource_id
        return self._json("POST", "/v1/sessions/" + _segment(session_id) + "/events", body)

    def session_context(self, session_id: str, token_limit: Optional[int] = None) -> Dict[str, Any]:
        """The session as a prompt section within token_limit."""
        return self._json("GET", "/v1/sessions/" + _segment(session_id) + "/context", query={"token_limit": token_limit})

    def end_session(self, session_id: str, outcome: str, note: Optional[str] = None) -> Dict[str, Any]:
        """Ends a run ("success"/"failure"): strategies are distilled."""
        body: Dict[str, Any] = {"outcome": outcome}
        if note is not None:
            body["note"] = note
        return self._json("POST", "/v1/sessions/" + _segment(session_id) + "/end", body)

    def prompt(self, query: str, token_budget: int, **options: Any) -> Dict[str, Any]:
        """Persona, session context and recalled memories in one budget
        (agent_id, session_id)."""
        return self._json("POST", "/v1/prompt", {"query": query, "token_budget": token_budget, **options})

    def health(self) -> Dict[str, Any]:
        """GET /healthz (no key needed)."""
        return self._json("GET", "/healthz")


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _key_path(key: str) -> str:
    """A key path, each segment percent-encoded (a key's '/' separate)."""
    return "/" + "/".join(urllib.parse.quote(seg, safe="") for seg in key.strip("/").split("/"))


def _error_from(err: urllib.error.HTTPError) -> EngramError:
    raw = err.read()
    err.close()
    code, message = "http_%d" % err.code, raw.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(raw)
        code, message = doc["error"]["code"], doc["error"]["message"]
    except (ValueError, KeyError, TypeError):
        pass
    return EngramError(code, message, err.code, err.headers.get("X-Request-ID"))

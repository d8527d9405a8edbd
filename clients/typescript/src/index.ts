// engram's TypeScript client: ESM, typed, built on fetch, no runtime
// dependencies. Node 18+, Deno, Bun and browsers.

import type {
  Alias,
  CreateResult,
  FeedbackRequest,
  FeedbackResult,
  FeedbackStatus,
  Interaction,
  InteractionRequest,
  Job,
  JobAccepted,
  JobFilter,
  JobPage,
  Link,
  Memory,
  MemoryFilter,
  MemoryInput,
  MemoryPage,
  PairFilter,
  PairFormat,
  Recall,
  RecallRequest,
  ReflectResult,
  Route,
  SessionEvent,
  SleepResult,
} from "./types.js";

export type * from "./types.js";

/** A refusal from engram, with engram's code and message. */
export class EngramError extends Error {
  constructor(
    /** engram's error code: invalid, unauthorized, not_found, conflict, rate_limited, … */
    readonly code: string,
    message: string,
    /** The HTTP status. */
    readonly status: number,
    /** X-Request-ID, to find the request in the server's log. */
    readonly requestId?: string,
  ) {
    super(message);
    this.name = "EngramError";
  }
}

export interface EngramOptions {
  /** Default: ENGRAM_URL, else http://127.0.0.1:8080. */
  url?: string;
  /** Default: ENGRAM_API_KEY. */
  apiKey?: string;
  /** Tries again after a 429 or 503 (default 3). */
  maxRetries?: number;
  /** Back-off before try n when no Retry-After came: backoffMs × 2^n (default 500). */
  backoffMs?: number;
  /** The longest wait before another try (default 60 000). */
  maxRetryWaitMs?: number;
  /** Per request (default 30 000). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** Whether a reflect or sleep answered a queued job rather than its result. */
export function isJobAccepted<T extends object>(x: T | JobAccepted): x is JobAccepted {
  return "job_id" in x;
}

/** Whether a feedback answered its status (asynchronous) rather than its result. */
export function isFeedbackStatus(x: FeedbackResult | FeedbackStatus): x is FeedbackStatus {
  return "status" in x;
}

/** How long waitJob and waitFeedback wait, and how often they look. */
export interface WaitOptions {
  /** Default 600 000 for a job, 60 000 for a feedback. */
  timeoutMs?: number;
  /** Default 500 for a job, 200 for a feedback. */
  intervalMs?: number;
}

/** Statuses worth another try: slow down (429), briefly unavailable (503). */
export const RETRY_STATUSES = [429, 503];

type Query = Record<string, string | number | boolean | string[] | undefined>;

function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

/** How long to wait before try attempt+1, from Retry-After (seconds or an HTTP date) or the back-off. */
export function retryWait(header: string | null, attempt: number, backoffMs: number, maxMs: number, now = Date.now()): number {
  let wait = backoffMs * 2 ** attempt;
  if (header) {
    const h = header.trim();
    if (/^\d+$/.test(h)) {
      wait = Number(h) * 1000;
    } else {
      const at = Date.parse(h);
      if (!Number.isNaN(at)) wait = Math.max(0, at - now);
    }
  }
  return Math.min(wait, maxMs);
}

function segment(s: string): string {
  return encodeURIComponent(s);
}

function keyPath(key: string): string {
  return "/" + key.replace(/^\/+|\/+$/g, "").split("/").map(segment).join("/");
}

/** engram's HTTP API v1. */
export class Engram {
  readonly url: string;
  private readonly apiKey: string;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxRetryWaitMs: number;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly pause: (ms: number) => Promise<void>;

  constructor(options: EngramOptions = {}) {
    this.url = (options.url ?? env("ENGRAM_URL") ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? env("ENGRAM_API_KEY") ?? "";
    this.maxRetries = options.maxRetries ?? 3;
    this.backoffMs = options.backoffMs ?? 500;
    this.maxRetryWaitMs = options.maxRetryWaitMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.pause = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Sends one request, trying 429 and 503 again, and returns a 2xx response. */
  private async send(method: string, path: string, body?: unknown, query?: Query, extraHeaders?: Record<string, string>): Promise<Response> {
    let target = this.url + path;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) params.set(k, Array.isArray(v) ? v.join(",") : String(v));
    }
    if ([...params].length > 0) target += "?" + params.toString();
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    Object.assign(headers, extraHeaders);
    for (let attempt = 0; ; attempt++) {
      const resp = await this.fetchFn(target, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (resp.ok) return resp;
      if (RETRY_STATUSES.includes(resp.status) && attempt < this.maxRetries) {
        await resp.body?.cancel();
        await this.pause(retryWait(resp.headers.get("Retry-After"), attempt, this.backoffMs, this.maxRetryWaitMs));
        continue;
      }
      throw await errorFrom(resp);
    }
  }

  private async json<T>(method: string, path: string, body?: unknown, query?: Query, headers?: Record<string, string>): Promise<T> {
    const resp = await this.send(method, path, body, query, headers);
    return (await resp.json()) as T;
  }

  /** Creates an L2 memory; the same content again answers the existing one, deduplicated. */
  remember(memory: MemoryInput): Promise<CreateResult> {
    return this.json("POST", "/v1/memories", memory);
  }

  /** One memory, tombstoned ones too (valid: false). */
  getMemory(id: string): Promise<Memory> {
    return this.json("GET", "/v1/memories/" + segment(id));
  }

  /** One page, newest first. */
  listMemories(filter: MemoryFilter = {}): Promise<MemoryPage> {
    return this.json("GET", "/v1/memories", undefined, { ...filter });
  }

  /** Every memory the filter matches, page after page. */
  async *iterMemories(filter: MemoryFilter = {}): AsyncGenerator<Memory> {
    let cursor = filter.cursor;
    do {
      const page = await this.listMemories({ ...filter, cursor });
      yield* page.items;
      cursor = page.next_cursor;
    } while (cursor);
  }

  /** Changes the fields given; with version, a stale write is a conflict. */
  updateMemory(id: string, fields: Partial<MemoryInput> & { version?: number }): Promise<Memory> {
    return this.json("PATCH", "/v1/memories/" + segment(id), fields);
  }

  /** Tombstones a memory (its history stays). */
  forget(id: string): Promise<Memory> {
    return this.json("DELETE", "/v1/memories/" + segment(id));
  }

  /** set_memory: last write wins; content null tombstones. */
  setKey(key: string, content: unknown, source: unknown, fields: Record<string, unknown> = {}): Promise<Memory> {
    return this.json("PUT", "/v1/keys" + keyPath(key), { ...fields, content, source });
  }

  /** The live memory at key; not_found once tombstoned. */
  getKey(key: string): Promise<Memory> {
    return this.json("GET", "/v1/keys" + keyPath(key));
  }

  deleteKey(key: string): Promise<Memory> {
    return this.json("DELETE", "/v1/keys" + keyPath(key));
  }

  route(query: string): Promise<Route> {
    return this.json("POST", "/v1/route", { query });
  }

  /** The memories worth injecting for a query, within token_budget. */
  recall(request: RecallRequest): Promise<Recall> {
    return this.json("POST", "/v1/recall", request);
  }

  /** The default read block: [Agent Memory] then one line per memory. */
  async context(tokenLimit?: number, tags?: string[]): Promise<string> {
    const out = await this.json<{ context: string }>("GET", "/v1/context", undefined, { token_limit: tokenLimit, tags });
    return out.context;
  }

  /** Records an answer; two answers of one turn_id with different feedback make a pair. */
  logInteraction(request: InteractionRequest): Promise<Interaction> {
    return this.json("POST", "/v1/interactions", request);
  }

  /**
   * A thumb or 1–5 rating; an idempotency key is generated when none is given.
   * With respondAsync the request says Prefer: respond-async: the server answers
   * 202 once the feedback is durably queued, with a FeedbackStatus (pending) that
   * feedbackStatus() follows. A server with feedback.async on answers so always.
   */
  feedback(request: FeedbackRequest): Promise<FeedbackResult>;
  feedback(request: FeedbackRequest, options: { respondAsync: true }): Promise<FeedbackStatus>;
  feedback(request: FeedbackRequest, options?: { respondAsync?: boolean }): Promise<FeedbackResult | FeedbackStatus>;
  feedback(request: FeedbackRequest, options: { respondAsync?: boolean } = {}): Promise<FeedbackResult | FeedbackStatus> {
    const headers = options.respondAsync ? { Prefer: "respond-async" } : undefined;
    return this.json("POST", "/v1/feedback", { ...request, idempotency_key: request.idempotency_key ?? newIdempotencyKey() }, undefined, headers);
  }

  /** A feedback: pending (queued, not applied yet) or applied with its result. */
  feedbackStatus(id: string): Promise<FeedbackStatus> {
    return this.json("GET", "/v1/feedback/" + segment(id));
  }

  /** Reads the feedback's status until it is applied; an Error after timeoutMs. */
  async waitFeedback(id: string, options: WaitOptions = {}): Promise<FeedbackStatus> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const st = await this.feedbackStatus(id);
      if (st.status === "applied") return st;
      if (Date.now() >= deadline) throw new Error(`feedback ${id} still ${st.status} after ${options.timeoutMs ?? 60_000} ms`);
      await this.pause(options.intervalMs ?? 200);
    }
  }

  thumb(interactionId: string, thumb: "up" | "down", reason?: string): Promise<FeedbackResult> {
    return this.feedback({ interaction_id: interactionId, thumb, reason });
  }

  rate(interactionId: string, rating: 1 | 2 | 3 | 4 | 5, reason?: string): Promise<FeedbackResult> {
    return this.feedback({ interaction_id: interactionId, rating, reason });
  }

  /** Streams the tenant's preference data, one object per JSON line, as it arrives. */
  async *exportPairs<T = Record<string, unknown>>(format: PairFormat = "trl", filter: PairFilter = {}): AsyncGenerator<T> {
    const resp = await this.send("GET", "/v1/pairs", undefined, { format, ...filter });
    if (!resp.body) return;
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of resp.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line) yield JSON.parse(line) as T;
      }
    }
    buffered += decoder.decode();
    if (buffered.trim()) yield JSON.parse(buffered) as T;
  }

  /**
   * Runs the reflector (optionally one category): its result on a small tenant;
   * on one past the server's jobs.inline_max_memories a JobAccepted at once,
   * which waitJob() follows (isJobAccepted tells them apart).
   */
  reflect(category?: string): Promise<ReflectResult | JobAccepted> {
    return this.json("POST", "/v1/reflect", category ? { category } : {});
  }

  /** One sleep cycle of the tenant: its result, or a JobAccepted on a large tenant, as reflect(). */
  sleep(): Promise<SleepResult | JobAccepted> {
    return this.json("POST", "/v1/sleep");
  }

  /** One job of the tenant: status, progress, result or error. */
  job(id: string): Promise<Job> {
    return this.json("GET", "/v1/jobs/" + segment(id));
  }

  /** One page of the tenant's jobs, newest first. */
  jobs(filter: JobFilter = {}): Promise<JobPage> {
    return this.json("GET", "/v1/jobs", undefined, { ...filter });
  }

  /** Reads the job until it is done or failed and returns it (check status); an Error after timeoutMs. */
  async waitJob(job: string | JobAccepted | Job, options: WaitOptions = {}): Promise<Job> {
    const id = typeof job === "string" ? job : "job_id" in job ? job.job_id : job.id;
    const timeout = options.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeout;
    for (;;) {
      const j = await this.job(id);
      if (j.status === "done" || j.status === "failed") return j;
      if (Date.now() >= deadline) throw new Error(`job ${id} still ${j.status} after ${timeout} ms`);
      await this.pause(options.intervalMs ?? 500);
    }
  }

  /** Links memory from to to (relation related by default): a new version of from; the same link again answers it. */
  link(from: string, to: string, relation?: string): Promise<Link> {
    return this.json("POST", `/v1/memories/${segment(from)}/links`, relation === undefined ? { to } : { to, relation });
  }

  /** The memory's live links, from it and to it, oldest first. */
  async links(id: string): Promise<Link[]> {
    return (await this.json<{ items: Link[] }>("GET", `/v1/memories/${segment(id)}/links`)).items;
  }

  /** Removes one relation from from to to, or every one when none is given; answers the links removed. */
  async unlink(from: string, to: string, relation?: string): Promise<Link[]> {
    const path = `/v1/memories/${segment(from)}/links/${segment(to)}` + (relation === undefined ? "" : "/" + segment(relation));
    return (await this.json<{ removed: Link[] }>("DELETE", path)).removed;
  }

  /** Makes alias another path of the live key (the keys routes then act on that memory through it). */
  putAlias(alias: string, key: string, userId?: string): Promise<Alias> {
    return this.json("PUT", "/v1/aliases" + keyPath(alias), userId === undefined ? { key } : { key, user_id: userId });
  }

  /** One alias; valid is false while its target is tombstoned. */
  getAlias(alias: string, userId?: string): Promise<Alias> {
    return this.json("GET", "/v1/aliases" + keyPath(alias), undefined, { user_id: userId });
  }

  /** Removes the alias (a new version of its target); answers it. */
  deleteAlias(alias: string, userId?: string): Promise<Alias> {
    return this.json("DELETE", "/v1/aliases" + keyPath(alias), undefined, { user_id: userId });
  }

  /** Every alias of the memory, every user's, oldest first. */
  async aliases(memoryId: string): Promise<Alias[]> {
    return (await this.json<{ items: Alias[] }>("GET", `/v1/memories/${segment(memoryId)}/aliases`)).items;
  }

  /** Appends events to an L1 session, created on its first post. */
  addEvents(sessionId: string, events: SessionEvent[], resourceId?: string): Promise<Record<string, unknown>> {
    return this.json("POST", `/v1/sessions/${segment(sessionId)}/events`, { events, resource_id: resourceId });
  }

  /** The session as a prompt section within tokenLimit. */
  sessionContext(sessionId: string, tokenLimit?: number): Promise<{ context: string; tokens_used: number; [extra: string]: unknown }> {
    return this.json("GET", `/v1/sessions/${segment(sessionId)}/context`, undefined, { token_limit: tokenLimit });
  }

  /** Ends a run; strategies are distilled from it. */
  endSession(sessionId: string, outcome: "success" | "failure", note?: string): Promise<Record<string, unknown>> {
    return this.json("POST", `/v1/sessions/${segment(sessionId)}/end`, { outcome, note });
  }

  /** Persona, session context and recalled memories in one budget. */
  prompt(request: { query: string; token_budget: number; agent_id?: string; session_id?: string }): Promise<{ context: string; recall_id: string; tokens_used: number; [extra: string]: unknown }> {
    return this.json("POST", "/v1/prompt", request);
  }

  health(): Promise<Record<string, unknown>> {
    return this.json("GET", "/healthz");
  }
}

/** A random UUID: Web Crypto where there is one (browsers, Deno, Bun, Node 19+), else Math.random's bits. */
function newIdempotencyKey(): string {
  const webCrypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (webCrypto?.randomUUID) return webCrypto.randomUUID();
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16));
  hex[12] = "4";
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const s = hex.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

async function errorFrom(resp: Response): Promise<EngramError> {
  const text = await resp.text();
  let code = `http_${resp.status}`;
  let message = text.trim();
  try {
    const doc = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (doc.error?.code) {
      code = doc.error.code;
      message = doc.error.message ?? "";
    }
  } catch {
    // not JSON: the status and body say what there is
  }
  return new EngramError(code, message, resp.status, resp.headers.get("X-Request-ID") ?? undefined);
}

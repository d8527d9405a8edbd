// Wire types of engram's HTTP API v1. Field names are the API's own
// (snake_case), so what you read here is what the docs and
// /openapi.json say; fields the server adds later pass through.

/** An L2 memory. */
export interface Memory {
  id: string;
  category: string;
  content: string;
  key?: string;
  agent_id?: string;
  subcategory?: string;
  type?: string;
  tags: string[];
  data?: unknown;
  summary?: string;
  source?: unknown;
  importance: number;
  confidence: number;
  priority: string;
  reward: number;
  up_count: number;
  down_count: number;
  needs_revision: boolean;
  stability: number;
  token_count: number;
  valid: boolean;
  archived: boolean;
  version: number;
  created_at: string;
  updated_at: string;
  expires_at?: string;
  [extra: string]: unknown;
}

/** Fields of a new memory (POST /v1/memories). */
export interface MemoryInput {
  content: string;
  category?: string;
  subcategory?: string;
  type?: string;
  tags?: string[];
  summary?: string;
  data?: unknown;
  source?: unknown;
  importance?: number;
  confidence?: number;
  priority?: "P0" | "P1" | "P2" | "P3";
  agent_id?: string;
  expires_at?: string;
  [extra: string]: unknown;
}

/** What POST /v1/memories answers; deduplicated: the same content was live. */
export interface CreateResult {
  memory: Memory;
  deduplicated: boolean;
}

/** Filters of GET /v1/memories. */
export interface MemoryFilter {
  category?: string;
  tag?: string;
  q?: string;
  needs_revision?: boolean;
  /** true: only the memories the write gate quarantined (archived or not); false: none of them. */
  quarantined?: boolean;
  key_prefix?: string;
  agent_id?: string;
  include_deleted?: boolean;
  include_archived?: boolean;
  limit?: number;
  cursor?: string;
}

export interface MemoryPage {
  items: Memory[];
  next_cursor?: string;
}

export interface Route {
  intent: "ask" | "decide" | "reflect";
  mode: string;
  domains: { name: string; score: number }[];
  categories: string[];
  layers: string[];
  identity: boolean;
}

export interface RecallRequest {
  query: string;
  token_budget: number;
  tags?: string[];
  agent_id?: string;
  session_id?: string;
  fill?: boolean;
  identity?: boolean;
  [extra: string]: unknown;
}

/** One injected memory, in injection order, with its score's breakdown. */
export interface RecallItem {
  id: string;
  key?: string;
  category: string;
  version: number;
  text: string;
  tokens: number;
  used_summary?: boolean;
  score: number;
  breakdown: Record<string, number>;
}

/** A budgeted recall: put context into the prompt, keep recall_id for feedback. */
export interface Recall {
  recall_id: string;
  query: string;
  route: Route;
  items: RecallItem[];
  context: string;
  tokens_used: number;
  token_budget: number;
  [extra: string]: unknown;
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface InteractionRequest {
  prompt: string | ChatMessage[];
  response: string;
  recall_id?: string;
  session_id?: string;
  turn_id?: string;
  model?: string;
}

export interface Interaction {
  interaction_id: string;
  group_key: string;
  created_at: string;
  [extra: string]: unknown;
}

export interface FeedbackRequest {
  interaction_id?: string;
  recall_id?: string;
  memory_id?: string;
  thumb?: "up" | "down";
  rating?: 1 | 2 | 3 | 4 | 5;
  reason?: string;
  correction?: string;
  rater?: string;
  /** Generated (a UUID) when not given, so a retried post counts once. */
  idempotency_key?: string;
}

export interface Credit {
  id: string;
  version: number;
  weight: number;
  reward: number;
  confidence: number;
  stability: number;
  needs_revision: boolean;
  up_count: number;
  down_count: number;
}

export interface FeedbackResult {
  feedback_id: string;
  signal: number;
  credited: Credit[];
  pairs: string[];
  /** True when the idempotency key had been seen: nothing changed again. */
  replayed?: boolean;
}

export type PairFormat = "trl" | "trl-conversational" | "trl-unpaired" | "openai";

export interface PairFilter {
  since?: string;
  until?: string;
  category?: string;
  /** Exactly this end user's data ("" the shared data); absent: every user's. */
  user_id?: string;
  min_margin?: number;
  cursor?: string;
  limit?: number;
}

/** A session event (POST /v1/sessions/{id}/events). */
export interface SessionEvent {
  type: string;
  role?: string;
  speaker?: string;
  content?: unknown;
  at?: string;
  message_id?: string;
  [extra: string]: unknown;
}

/** A feedback acknowledged asynchronously (202) or read back (GET /v1/feedback/{id}). */
export interface FeedbackStatus {
  feedback_id: string;
  /** pending until a server applied it, then applied with result. */
  status: "pending" | "applied";
  /** Ids of the memories and reflections it credits. */
  credits: string[];
  result?: FeedbackResult;
  replayed?: boolean;
}

/** What the reflector did to one group. */
export interface ReflectOutcome {
  group: string;
  id?: string;
  version?: number;
  writer?: string;
  reason?: string;
}

/** What a reflect did: groups written, skipped (unchanged), failed. */
export interface ReflectResult {
  groups: number;
  written: ReflectOutcome[];
  skipped: ReflectOutcome[];
  failed: ReflectOutcome[];
}

/** What one sleep cycle did (POST /v1/sleep). */
export interface SleepResult {
  merged: number;
  archived: number;
  expired: number;
  events_folded: number;
  event_bytes_before: number;
  event_bytes_after: number;
  reflect: ReflectResult;
  conflicts: number;
  [extra: string]: unknown;
}

/** A reflect or sleep queued as a job (202): follow it with job() or waitJob(). */
export interface JobAccepted {
  job_id: string;
  status: "queued";
  status_url: string;
}

export type JobStatus = "queued" | "running" | "done" | "failed";

/** Long work of the tenant (GET /v1/jobs/{id}). */
export interface Job {
  id: string;
  kind: "reflect" | "sleep";
  status: JobStatus;
  request?: Record<string, unknown>;
  /** Steps done of the total (0 until the job knows it). */
  progress: { done: number; total: number };
  /** Runs begun; above 1 a server stopped while running it. */
  attempts: number;
  /** When done: what the request would have answered inline (ReflectResult or SleepResult). */
  result?: ReflectResult | SleepResult;
  /** When failed: why. */
  error?: string;
  created_at: string;
  started_at?: string;
  finished_at?: string;
}

export interface JobFilter {
  status?: JobStatus;
  limit?: number;
  cursor?: string;
}

export interface JobPage {
  items: Job[];
  next_cursor?: string;
}

/** A named relation from one memory to another. */
export interface Link {
  from: string;
  to: string;
  /** related (the default), answers, mentions, corrects, supports, contradicts, part_of, follows, same_entity, or free text. */
  relation: string;
  version: number;
  created_at: string;
}

/** Another key path of a memory that has a key; valid is false while its target is tombstoned or expired. */
export interface Alias {
  alias: string;
  key: string;
  memory_id: string;
  user_id?: string;
  version: number;
  created_at: string;
  valid: boolean;
}

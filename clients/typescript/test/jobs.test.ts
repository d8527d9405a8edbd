// Jobs, asynchronous feedback, links and aliases against a real
// `engram serve` (ENGRAM_URL, ENGRAM_API_KEY). The jobs tests make fresh
// tenants through the admin API, so they need the server's admin key in
// ENGRAM_ADMIN_KEY, and write one memory more than the server's
// jobs.inline_max_memories (ENGRAM_JOBS_INLINE_MAX_MEMORIES, the variable
// the server reads; .ci/run sets both) into one of them.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { Engram, EngramError, isFeedbackStatus, isJobAccepted } from "../src/index.js";

const live = Boolean(process.env.ENGRAM_URL && process.env.ENGRAM_API_KEY);
const adminKey = process.env.ENGRAM_ADMIN_KEY;
const inlineMax = Number(process.env.ENGRAM_JOBS_INLINE_MAX_MEMORIES ?? "2000");
const marker = () => randomUUID().replaceAll("-", "").slice(0, 12);

async function refusal(p: Promise<unknown>): Promise<EngramError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof EngramError, `not an EngramError: ${err}`);
    return err;
  }
  assert.fail("the request was not refused");
}

/**
 * POSTs body to an admin path with the admin key, waiting out a 429 (the
 * other suite's bad keys slow this address down for a while).
 */
async function adminPost(path: string, body: unknown): Promise<Response> {
  const base = process.env.ENGRAM_URL!.replace(/\/+$/, "");
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(base + path, {
      method: "POST",
      headers: { Authorization: `Bearer ${adminKey}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status !== 429 || attempt >= 5) return r;
    await r.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.headers.get("Retry-After") ?? "1")));
  }
}

/** A client of a fresh tenant, made through the admin API. */
async function tenant(): Promise<Engram> {
  const name = `ts-${marker()}`;
  let r = await adminPost("/v1/admin/tenants", { name });
  assert.equal(r.status, 201, await r.text());
  r = await adminPost(`/v1/admin/tenants/${name}/keys`, { name: "client-test" });
  assert.equal(r.status, 201);
  const made = (await r.json()) as { secret: string };
  return new Engram({ apiKey: made.secret });
}

describe("jobs", { skip: !live ? "ENGRAM_URL and ENGRAM_API_KEY name the server under test" : !adminKey ? "ENGRAM_ADMIN_KEY makes the tenants the jobs tests need" : false }, () => {
  test("a small tenant reflects and sleeps in the request", async () => {
    const c = await tenant();
    for (const content of ["Ada drinks oolong tea every morning", "Ada buys tea leaves in Taipei", "Ada brews tea at 85 degrees"]) {
      await c.remember({ content, category: "preference" });
    }
    const res = await c.reflect();
    assert.ok(!isJobAccepted(res));
    assert.ok(res.groups >= 1);
    assert.equal(res.written.length, res.groups);
    const slept = await c.sleep();
    assert.ok(!isJobAccepted(slept));
    assert.equal(typeof slept.reflect.groups, "number");
    assert.deepEqual((await c.jobs()).items, []);
    const bad = await refusal(c.reflect("no-such-category"));
    assert.equal(bad.code, "invalid");
  });

  test("a large tenant's reflect and sleep are jobs", { skip: inlineMax > 200 ? `the server reflects up to ${inlineMax} memories inline; set ENGRAM_JOBS_INLINE_MAX_MEMORIES lower` : false }, async () => {
    const c = await tenant();
    for (let i = 0; i <= inlineMax; i++) {
      await c.remember({ content: `Ada keeps tea note number ${i} in the kitchen drawer`, category: "preference" });
    }
    const queued = await c.reflect();
    assert.ok(isJobAccepted(queued));
    assert.equal(queued.status, "queued");
    assert.equal(queued.status_url, `/v1/jobs/${queued.job_id}`);
    const job = await c.waitJob(queued, { timeoutMs: 120_000 });
    assert.equal(job.kind, "reflect");
    assert.equal(job.status, "done");
    assert.equal(job.progress.done, job.progress.total);
    assert.ok(job.result && "written" in job.result);
    const slept = await c.sleep();
    assert.ok(isJobAccepted(slept));
    const done = await c.waitJob(slept.job_id, { timeoutMs: 120_000 });
    assert.deepEqual([done.kind, done.status], ["sleep", "done"]);
    assert.deepEqual((await c.jobs()).items.map((j) => j.id), [slept.job_id, queued.job_id]);
    assert.deepEqual((await c.jobs({ status: "done", limit: 1 })).items.map((j) => j.id), [slept.job_id]);
    const other = await refusal(new Engram().job(queued.job_id));
    assert.deepEqual([other.code, other.status], ["not_found", 404]);
  });
});

describe("feedback, links, aliases", { skip: live ? false : "ENGRAM_URL and ENGRAM_API_KEY name the server under test" }, () => {
  const engram = new Engram();

  test("asynchronous feedback is acknowledged, then applied", async () => {
    const m = marker();
    await engram.remember({ content: `Barometer restoration fills the user's weekends ${m}`, category: "preference" });
    const recall = await engram.recall({ query: `barometer restoration ${m}`, token_budget: 100 });
    const injected = recall.items.map((x) => x.id).sort();
    const queued = await engram.feedback({ recall_id: recall.recall_id, thumb: "up", idempotency_key: `a-${m}` }, { respondAsync: true });
    assert.ok(isFeedbackStatus(queued));
    assert.match(queued.feedback_id, /^fb_/);
    assert.deepEqual([...queued.credits].sort(), injected);
    const applied = await engram.waitFeedback(queued.feedback_id, { timeoutMs: 30_000 });
    assert.equal(applied.status, "applied");
    assert.deepEqual(applied.result?.credited.map((x) => x.id).sort(), injected);
    const again = await engram.feedback({ recall_id: recall.recall_id, thumb: "up", idempotency_key: `a-${m}` }, { respondAsync: true });
    assert.equal(again.feedback_id, queued.feedback_id);
    assert.equal(again.replayed, true);
    const bad = await refusal(engram.feedback({ recall_id: recall.recall_id, thumb: "sideways" as "up" }, { respondAsync: true }));
    assert.deepEqual([bad.code, bad.status], ["invalid", 400]);
    assert.equal((await refusal(engram.feedbackStatus("fb_doesnotexist000000"))).code, "not_found");
    assert.ok(!isFeedbackStatus(await engram.feedback({ recall_id: recall.recall_id, thumb: "down" })));
  });

  test("links", async () => {
    const m = marker();
    const tortoise = (await engram.remember({ content: `Zephyr the tortoise hibernates in the cellar ${m}`, category: "life" })).memory;
    const diet = (await engram.remember({ content: `Zephyr only eats dandelion leaves ${m}`, category: "life" })).memory;
    const made = await engram.link(diet.id, tortoise.id, "mentions");
    assert.deepEqual([made.from, made.to, made.relation, made.version], [diet.id, tortoise.id, "mentions", 2]);
    assert.deepEqual(await engram.link(diet.id, tortoise.id, "mentions"), made);
    assert.equal((await engram.link(diet.id, tortoise.id)).relation, "related");
    assert.deepEqual((await engram.links(tortoise.id)).map((l) => [l.from, l.relation]), [[diet.id, "mentions"], [diet.id, "related"]]);
    assert.equal((await refusal(engram.link(tortoise.id, tortoise.id))).code, "invalid");
    assert.equal((await refusal(engram.link(tortoise.id, "mem_doesnotexist000000"))).code, "not_found");
    assert.deepEqual((await engram.unlink(diet.id, tortoise.id, "mentions")).map((l) => l.relation), ["mentions"]);
    assert.deepEqual((await engram.unlink(diet.id, tortoise.id)).map((l) => l.relation), ["related"]);
    assert.deepEqual(await engram.links(diet.id), []);
    assert.equal((await refusal(engram.unlink(diet.id, tortoise.id))).code, "not_found");
  });

  test("aliases", async () => {
    const m = marker();
    const pet = await engram.setKey(`/user/pet-${m}`, { name: "Dumpling" }, "chat");
    const alias = await engram.putAlias(`/user/猫-${m}`, `/user/pet-${m}`);
    assert.deepEqual([alias.alias, alias.key, alias.memory_id, alias.valid], [`/user/猫-${m}`, `/user/pet-${m}`, pet.id, true]);
    assert.equal((await engram.putAlias(`/user/猫-${m}`, `/user/pet-${m}`)).memory_id, pet.id);
    assert.equal((await engram.getKey(`/user/猫-${m}`)).id, pet.id);
    assert.deepEqual((await engram.aliases(pet.id)).map((a) => a.alias), [`/user/猫-${m}`]);
    assert.equal((await refusal(engram.putAlias(`/user/pet-${m}`, `/user/pet-${m}`))).code, "invalid");
    assert.equal((await refusal(engram.putAlias(`/user/dog-${m}`, `/user/none-${m}`))).code, "not_found");
    await engram.deleteKey(`/user/pet-${m}`);
    assert.equal((await engram.getAlias(`/user/猫-${m}`)).valid, false);
    assert.equal((await engram.deleteAlias(`/user/猫-${m}`)).alias, `/user/猫-${m}`);
    assert.deepEqual(await engram.aliases(pet.id), []);
  });
});

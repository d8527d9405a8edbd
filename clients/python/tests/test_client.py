"""The client against a real ``engram serve``: ENGRAM_URL and
ENGRAM_API_KEY name it (.ci/run starts one). Every test writes content of
its own (a random marker), so the suite can run again on the same server."""

from __future__ import annotations

import os
import unittest
import uuid

from engram import Client, EngramError, FeedbackResult, Memory, Recall


def marker() -> str:
    return uuid.uuid4().hex[:12]


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not os.environ.get("ENGRAM_URL") or not os.environ.get("ENGRAM_API_KEY"):
            raise unittest.SkipTest("ENGRAM_URL and ENGRAM_API_KEY name the engram server under test")
        cls.client = Client()

    def test_remember_get_list_forget(self) -> None:
        m = marker()
        created = self.client.remember(f"Ada prefers tea {m}", category="preference", tags=["drinks"])
        self.assertFalse(created.deduplicated)
        self.assertIsInstance(created.memory, Memory)
        self.assertEqual(created.memory.tags, ["drinks"])
        again = self.client.remember(f"Ada prefers tea {m}", category="preference")
        self.assertTrue(again.deduplicated)
        self.assertEqual(again.memory.id, created.memory.id)
        got = self.client.get_memory(created.memory.id)
        self.assertEqual(got.content, f"Ada prefers tea {m}")
        self.assertEqual(got.version, 1)
        page = self.client.list_memories(q=m, limit=10)
        self.assertEqual([x.id for x in page.items], [created.memory.id])
        patched = self.client.update_memory(created.memory.id, version=1, importance=0.9)
        self.assertEqual(patched.version, 2)
        with self.assertRaises(EngramError) as stale:
            self.client.update_memory(created.memory.id, version=1, importance=0.1)
        self.assertEqual((stale.exception.code, stale.exception.status), ("conflict", 409))
        gone = self.client.forget(created.memory.id)
        self.assertFalse(gone.valid)

    def test_iter_memories_follows_cursors(self) -> None:
        m = marker()
        ids = {self.client.remember(f"note {i} {m}", category="work").memory.id for i in range(3)}
        seen = [x.id for x in self.client.iter_memories(q=m, limit=2)]
        self.assertEqual(sorted(seen), sorted(ids))

    def test_keys_set_get_tombstone(self) -> None:
        key = f"/user/日程/牙科-{marker()}"
        mem = self.client.set_key(key, {"text": "下周三上午十点牙科复诊"}, "chat")
        self.assertEqual(mem.key, key)
        self.assertEqual(self.client.get_key(key).data, {"text": "下周三上午十点牙科复诊"})
        self.client.set_key(key, None, "chat")
        with self.assertRaises(EngramError) as err:
            self.client.get_key(key)
        self.assertEqual(err.exception.code, "not_found")
        self.assertEqual(err.exception.status, 404)
        self.assertIn("tombstoned", err.exception.message)
        self.assertTrue(err.exception.request_id)

    def test_recall_into_prompt(self) -> None:
        m = marker()
        mem = self.client.remember(f"The user's cat is called Miso {m}", category="preference").memory
        recall = self.client.recall(f"What is the user's cat called {m}?", token_budget=200)
        self.assertIsInstance(recall, Recall)
        self.assertTrue(recall.recall_id.startswith("rec_"))
        self.assertEqual(recall.items[0].id, mem.id)
        self.assertGreater(recall.items[0].score, 0)
        self.assertIn("relevance", recall.items[0].breakdown)
        self.assertTrue(recall.context.startswith("[Agent Memory]"))
        self.assertLessEqual(recall.tokens_used, 200)
        self.assertIn(recall.route.intent, ("ask", "decide", "reflect"))
        self.assertEqual(self.client.route("Should I take the job?").intent, "decide")

    def test_feedback_is_idempotent(self) -> None:
        m = marker()
        self.client.remember(f"The user likes green tea {m}", category="preference")
        recall = self.client.recall(f"green tea {m}", token_budget=100)
        first = self.client.feedback(recall_id=recall.recall_id, thumb="up", idempotency_key="k-" + m)
        self.assertIsInstance(first, FeedbackResult)
        self.assertEqual(first.signal, 1)
        self.assertEqual(len(first.credited), 1)
        again = self.client.feedback(recall_id=recall.recall_id, thumb="up", idempotency_key="k-" + m)
        self.assertTrue(again.replayed)
        self.assertEqual(again.feedback_id, first.feedback_id)
        self.assertGreater(first.credited[0].reward, 0)
        self.assertEqual(again.credited, first.credited)
        self.assertEqual(self.client.get_memory(first.credited[0].id).version, first.credited[0].version)

    def test_pairs_stream_for_trl(self) -> None:
        m = marker()
        prompt = f"Tea or coffee? {m}"
        a = self.client.log_interaction(prompt, "Tea.", turn_id=m)
        b = self.client.log_interaction(prompt, "Coffee, black.", turn_id=m)
        self.assertTrue(a.interaction_id.startswith("int_"))
        self.client.thumb(a.interaction_id, "down")
        result = self.client.thumb(b.interaction_id, "up")
        self.assertEqual(len(result.pairs), 1)
        pairs = [p for p in self.client.export_pairs(format="trl") if p["prompt"] == prompt]
        self.assertEqual(pairs, [{"prompt": prompt, "chosen": "Coffee, black.", "rejected": "Tea."}])
        openai = [p for p in self.client.export_pairs(format="openai") if prompt in str(p)]
        self.assertEqual(openai[0]["preferred_output"], [{"role": "assistant", "content": "Coffee, black."}])

    def test_errors_carry_engram_code_and_message(self) -> None:
        with self.assertRaises(EngramError) as bad:
            self.client.recall("", token_budget=100)
        self.assertEqual((bad.exception.code, bad.exception.status), ("invalid", 400))
        self.assertTrue(bad.exception.message)
        with self.assertRaises(EngramError) as fmt:
            list(self.client.export_pairs(format="kto"))
        self.assertEqual(fmt.exception.code, "invalid")
        self.assertIn("kto", fmt.exception.message)
        with self.assertRaises(EngramError) as missing:
            self.client.get_memory("mem_doesnotexist0000000")
        self.assertEqual(missing.exception.code, "not_found")

    def test_sessions_and_prompt(self) -> None:
        sid = "s-" + marker()
        out = self.client.add_events(sid, [{"type": "message", "role": "user", "content": "I moved to Lisbon last week"}])
        self.assertEqual(len(out["events"]), 1)
        ctx = self.client.session_context(sid, token_limit=200)
        self.assertIn("Lisbon", ctx["context"])
        answer = self.client.prompt("Where do I live?", 300, session_id=sid)
        self.assertTrue(answer["recall_id"].startswith("rec_"))
        ended = self.client.end_session(sid, "success")
        self.assertEqual(ended["session"]["status"], "closed")

    def test_retries_429_after_retry_after(self) -> None:
        # Bad keys from this address make engram answer 429 with
        # Retry-After to everyone here until the guard refills; the
        # client with the good key waits what the server said and goes on.
        guesser = Client(api_key="not-a-key-" + marker(), max_retries=0)
        for _ in range(100):
            with self.assertRaises(EngramError) as err:
                guesser.list_memories(limit=1)
            if err.exception.code == "rate_limited":
                break
            self.assertEqual(err.exception.code, "unauthorized")
        self.assertEqual(err.exception.status, 429)
        waits = []
        patient = Client(sleep=lambda s: (waits.append(s), __import__("time").sleep(s)))
        self.assertIsInstance(patient.list_memories(limit=1).items, list)
        self.assertGreaterEqual(len(waits), 1)
        self.assertTrue(all(0 < w <= 60 for w in waits))


class RetryWaitTest(unittest.TestCase):
    """How long the client waits before another try (no server needed)."""

    def test_retry_after_seconds_date_and_backoff(self) -> None:
        c = Client(url="http://127.0.0.1:1", api_key="", backoff=0.5, max_retry_wait=30)
        self.assertEqual(c._retry_wait("7", 0), 7)
        self.assertEqual(c._retry_wait("3600", 0), 30)
        self.assertEqual(c._retry_wait(None, 0), 0.5)
        self.assertEqual(c._retry_wait(None, 2), 2.0)
        self.assertEqual(c._retry_wait("Wed, 21 Oct 2015 07:28:00 GMT", 0), 0)
        self.assertEqual(c._retry_wait("soon", 1), 1.0)


if __name__ == "__main__":
    unittest.main()

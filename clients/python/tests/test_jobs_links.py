"""Jobs, asynchronous feedback, links and aliases against a real
``engram serve`` (ENGRAM_URL, ENGRAM_API_KEY). The jobs tests make two
fresh tenants through the admin API, so they need the server's admin key
in ENGRAM_ADMIN_KEY, and write one memory more than the server's
``jobs.inline_max_memories`` (ENGRAM_JOBS_INLINE_MAX_MEMORIES, the same
variable the server reads; .ci/run sets both) into one of them."""

from __future__ import annotations

import os
import unittest
import uuid

from engram import (
    Alias,
    Client,
    EngramError,
    FeedbackResult,
    FeedbackStatus,
    Job,
    JobAccepted,
    Link,
    ReflectResult,
    SleepResult,
)


def marker() -> str:
    return uuid.uuid4().hex[:12]


def live() -> bool:
    return bool(os.environ.get("ENGRAM_URL") and os.environ.get("ENGRAM_API_KEY"))


@unittest.skipUnless(live(), "ENGRAM_URL and ENGRAM_API_KEY name the engram server under test")
class JobsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        admin_key = os.environ.get("ENGRAM_ADMIN_KEY")
        if not admin_key:
            raise unittest.SkipTest("ENGRAM_ADMIN_KEY (the server's admin key) makes the tenants the jobs tests need")
        cls.admin = Client(api_key=admin_key)
        cls.inline_max = int(os.environ.get("ENGRAM_JOBS_INLINE_MAX_MEMORIES", "2000"))

    def tenant(self) -> Client:
        """A client of a fresh tenant, through the admin API."""
        name = "py-" + marker()
        self.admin._json("POST", "/v1/admin/tenants", {"name": name})
        made = self.admin._json("POST", "/v1/admin/tenants/" + name + "/keys", {"name": "client-test"})
        return Client(api_key=made["secret"])

    def test_small_tenant_reflects_and_sleeps_inline(self) -> None:
        c = self.tenant()
        for text in ("Ada drinks oolong tea every morning", "Ada buys tea leaves in Taipei", "Ada brews tea at 85 degrees"):
            c.remember(text, category="preference")
        res = c.reflect()
        self.assertIsInstance(res, ReflectResult)
        self.assertGreaterEqual(res.groups, 1)
        self.assertEqual(len(res.written), res.groups)
        slept = c.sleep()
        self.assertIsInstance(slept, SleepResult)
        self.assertIsInstance(slept.reflect, ReflectResult)
        self.assertEqual(c.jobs().items, [])
        with self.assertRaises(EngramError) as bad:
            c.reflect("no-such-category")
        self.assertEqual((bad.exception.code, bad.exception.status), ("invalid", 400))

    def test_large_tenant_gets_jobs(self) -> None:
        if self.inline_max > 200:
            self.skipTest("the server reflects up to %d memories inline; set ENGRAM_JOBS_INLINE_MAX_MEMORIES lower" % self.inline_max)
        c = self.tenant()
        for i in range(self.inline_max + 1):
            c.remember("Ada keeps tea note number %d in the kitchen drawer" % i, category="preference")
        queued = c.reflect()
        self.assertIsInstance(queued, JobAccepted)
        self.assertEqual(queued.status, "queued")
        self.assertEqual(queued.status_url, "/v1/jobs/" + queued.job_id)
        job = c.wait_job(queued, timeout=120)
        self.assertIsInstance(job, Job)
        self.assertEqual((job.kind, job.status), ("reflect", "done"))
        self.assertGreaterEqual(job.attempts, 1)
        self.assertEqual(job.progress.done, job.progress.total)
        self.assertIn("written", job.result)
        slept = c.sleep()
        self.assertIsInstance(slept, JobAccepted)
        done = c.wait_job(slept.job_id, timeout=120)
        self.assertEqual((done.kind, done.status), ("sleep", "done"))
        listed = c.jobs()
        self.assertEqual([j.id for j in listed.items], [slept.job_id, queued.job_id])
        self.assertEqual([j.id for j in c.jobs(status="done", limit=1).items], [slept.job_id])
        with self.assertRaises(EngramError) as bad:
            c.jobs(status="sideways")
        self.assertEqual(bad.exception.code, "invalid")
        with self.assertRaises(EngramError) as other:
            Client().job(queued.job_id)
        self.assertEqual((other.exception.code, other.exception.status), ("not_found", 404))


@unittest.skipUnless(live(), "ENGRAM_URL and ENGRAM_API_KEY name the engram server under test")
class FeedbackLinksAliasesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = Client()

    def test_async_feedback(self) -> None:
        m = marker()
        self.client.remember(f"Barometer restoration fills the user's weekends {m}", category="preference")
        recall = self.client.recall(f"barometer restoration {m}", token_budget=100)
        injected = [x.id for x in recall.items]
        queued = self.client.feedback(recall_id=recall.recall_id, thumb="up", respond_async=True, idempotency_key="a-" + m)
        self.assertIsInstance(queued, FeedbackStatus)
        self.assertTrue(queued.feedback_id.startswith("fb_"))
        self.assertIn(queued.status, ("pending", "applied"))
        self.assertEqual(sorted(queued.credits), sorted(injected))
        applied = self.client.wait_feedback(queued.feedback_id, timeout=30)
        self.assertEqual(applied.status, "applied")
        self.assertIsInstance(applied.result, FeedbackResult)
        self.assertEqual(sorted(x.id for x in applied.result.credited), sorted(injected))
        again = self.client.feedback(recall_id=recall.recall_id, thumb="up", respond_async=True, idempotency_key="a-" + m)
        self.assertEqual(again.feedback_id, queued.feedback_id)
        self.assertTrue(again.replayed)
        with self.assertRaises(EngramError) as bad:
            self.client.feedback(recall_id=recall.recall_id, thumb="sideways", respond_async=True)
        self.assertEqual((bad.exception.code, bad.exception.status), ("invalid", 400))
        with self.assertRaises(EngramError) as missing:
            self.client.feedback_status("fb_doesnotexist000000")
        self.assertEqual(missing.exception.code, "not_found")
        sync = self.client.feedback(recall_id=recall.recall_id, thumb="down")
        self.assertIsInstance(sync, FeedbackResult)

    def test_links(self) -> None:
        m = marker()
        tortoise = self.client.remember(f"Zephyr the tortoise hibernates in the cellar {m}", category="life").memory
        diet = self.client.remember(f"Zephyr only eats dandelion leaves {m}", category="life").memory
        made = self.client.link(diet.id, tortoise.id, "mentions")
        self.assertIsInstance(made, Link)
        self.assertEqual((made.from_, made.to, made.relation, made.version), (diet.id, tortoise.id, "mentions", 2))
        self.assertEqual(self.client.link(diet.id, tortoise.id, "mentions"), made)
        self.assertEqual(self.client.link(diet.id, tortoise.id).relation, "related")
        self.assertEqual([(x.from_, x.relation) for x in self.client.links(tortoise.id)], [(diet.id, "mentions"), (diet.id, "related")])
        with self.assertRaises(EngramError) as self_link:
            self.client.link(tortoise.id, tortoise.id)
        self.assertEqual(self_link.exception.code, "invalid")
        with self.assertRaises(EngramError) as gone:
            self.client.link(tortoise.id, "mem_doesnotexist000000")
        self.assertEqual(gone.exception.code, "not_found")
        removed = self.client.unlink(diet.id, tortoise.id, "mentions")
        self.assertEqual([x.relation for x in removed], ["mentions"])
        self.assertEqual([x.relation for x in self.client.unlink(diet.id, tortoise.id)], ["related"])
        self.assertEqual(self.client.links(diet.id), [])
        with self.assertRaises(EngramError) as none:
            self.client.unlink(diet.id, tortoise.id)
        self.assertEqual(none.exception.code, "not_found")

    def test_aliases(self) -> None:
        m = marker()
        pet = self.client.set_key(f"/user/pet-{m}", {"name": "Dumpling"}, "chat")
        alias = self.client.put_alias(f"/user/猫-{m}", f"/user/pet-{m}")
        self.assertIsInstance(alias, Alias)
        self.assertEqual((alias.alias, alias.key, alias.memory_id, alias.valid), (f"/user/猫-{m}", f"/user/pet-{m}", pet.id, True))
        self.assertEqual(self.client.put_alias(f"/user/猫-{m}", f"/user/pet-{m}").memory_id, pet.id)
        self.assertEqual(self.client.get_key(f"/user/猫-{m}").id, pet.id)
        self.assertEqual([a.alias for a in self.client.aliases(pet.id)], [f"/user/猫-{m}"])
        with self.assertRaises(EngramError) as selfish:
            self.client.put_alias(f"/user/pet-{m}", f"/user/pet-{m}")
        self.assertEqual(selfish.exception.code, "invalid")
        with self.assertRaises(EngramError) as nokey:
            self.client.put_alias(f"/user/dog-{m}", f"/user/none-{m}")
        self.assertEqual(nokey.exception.code, "not_found")
        self.client.delete_key(f"/user/pet-{m}")
        self.assertFalse(self.client.get_alias(f"/user/猫-{m}").valid)
        self.assertEqual(self.client.delete_alias(f"/user/猫-{m}").alias, f"/user/猫-{m}")
        self.assertEqual(self.client.aliases(pet.id), [])


if __name__ == "__main__":
    unittest.main()

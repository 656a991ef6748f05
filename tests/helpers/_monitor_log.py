"""The synthetic query log of the monitor's tests and of ``docs/monitor.md``.

Weeks 1 and 2 (ISO weeks 2026-W46 and 2026-W47) hold the ground truth's own
queries, every other question (with all its phrasings) and every other
off-topic query in each week (its answerable and off-topic mix, as
calibrated); week 3 (2026-W48) holds the truth's off-topic queries, the
:data:`OFF_TOPIC` questions below (nothing a machine-learning user guide
answers) and a few answerable ones: mostly out-of-domain, the questions moved.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

#: Questions no machine-learning user guide answers (week 3's new traffic).
OFF_TOPIC = (
    "How long should I boil an egg for a runny yolk?",
    "What is the best time of year to visit Lisbon?",
    "How do I change a flat tyre on a mountain bike?",
    "Which wine goes with grilled salmon?",
    "How many players are on a rugby union team?",
    "How do I repot an orchid without killing it?",
    "What is the capital of Mongolia?",
    "How do I remove red wine stains from a carpet?",
    "When did the Berlin Wall fall?",
    "How do I knit a scarf for beginners?",
    "What are the rules of cricket's LBW?",
    "How much water does a cactus need in winter?",
    "How do I descale a kettle with vinegar?",
    "Who wrote the novel Middlemarch?",
    "How do I train a puppy to stop biting?",
    "What is the boiling point of water at altitude?",
    "How do I make sourdough starter from scratch?",
    "Which planets can be seen without a telescope?",
    "How do I fix a dripping kitchen tap?",
    "What is the offside rule in football?",
    "How do I apply for a passport renewal?",
    "How long does it take to walk the Camino de Santiago?",
    "What should I pack for a week of skiing?",
    "How do I cook risotto without stirring constantly?",
    "What causes the northern lights?",
    "How do I tune a guitar by ear?",
    "How often should I change my car's oil?",
    "What is the difference between a crocodile and an alligator?",
    "How do I paint a room without streaks?",
    "What are good exercises for lower back pain?",
    "How do I get rid of aphids on roses?",
    "How do I write a wedding speech?",
    "What is the tallest mountain in Africa?",
    "How do I clean a cast iron pan?",
    "What time zone is New Zealand in?",
    "How do I stop my bathroom mirror fogging up?",
    "How do I make cold brew coffee at home?",
    "Which chess opening is best for beginners?",
    "How do I hang a heavy picture on drywall?",
    "What is the plot of Swan Lake?",
)

WEEK1 = datetime(2026, 11, 9, 9, tzinfo=timezone.utc)  # Monday of ISO week 2026-W46


def truth_queries(truth_path: str | Path) -> tuple[list[str], list[str]]:
    """(answerable query texts, off-topic query texts) of a ground-truth JSON file, in file order."""
    t = json.loads(Path(truth_path).read_text(encoding="utf-8"))
    answerable = [q for question in t["questions"] for q in question["queries"].values()]
    return answerable, [o["query"] for o in t.get("ood", [])]


def calibration_weeks(truth_path: str | Path) -> tuple[list[str], list[str]]:
    """The ground truth's queries split over two weeks: questions (all phrasings) and off-topic queries alternate."""
    t = json.loads(Path(truth_path).read_text(encoding="utf-8"))
    weeks: tuple[list[str], list[str]] = ([], [])
    for i, question in enumerate(t["questions"]):
        weeks[i % 2].extend(question["queries"].values())
    for i, o in enumerate(t.get("ood", [])):
        weeks[i % 2].append(o["query"])
    return weeks


def write_synthetic_log(path: str | Path, truth_path: str | Path, *, answerable_in_week3: int = 5,
                        bad_lines: int = 0) -> Path:
    """Write the three-week log (JSON Lines) to ``path``; ``bad_lines`` adds lines without a query or a good time."""
    answerable, ood = truth_queries(truth_path)
    lines = []
    for week, part in enumerate(calibration_weeks(truth_path)):
        for i, q in enumerate(part):
            t = WEEK1 + timedelta(days=7 * week + i % 7, minutes=i)
            lines.append({"query": q, "time": t.isoformat().replace("+00:00", "Z")})
    week3 = ood + list(OFF_TOPIC) + answerable[:answerable_in_week3]
    for i, q in enumerate(week3):
        t = WEEK1 + timedelta(days=14 + i % 7, minutes=i)
        lines.append({"query": q, "time": t.isoformat(), "tags": ["week3"]})
    out = [json.dumps(r) for r in lines]
    for j in range(bad_lines):  # every third has no query, the others an unparsable time
        rec = {"time": "2026-11-10T10:00:00Z"} if j % 3 == 0 else {"query": "how do I scale features", "time": f"tuesday {j}"}
        out.insert(5 + 7 * j, json.dumps(rec))
    path = Path(path)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def write_mix_log(path: str | Path, truth_path: str | Path, *, off_topic_share: float, weeks: int = 12,
                  per_week: int = 300, shift_from_week: int | None = None, seed: int = 46) -> Path:
    """A log of ``weeks`` ISO weeks of ``per_week`` queries drawn from the ground truth's own distributions.

    Each query is off-topic with chance ``off_topic_share`` (one of the truth's off-topic queries, uniformly),
    else answerable (a question uniformly, then one of its phrasings): the calibration's distributions in a
    live mix, nothing moved. From week ``shift_from_week`` (0-based) on, a new off-topic topic arrives
    (:data:`OFF_TOPIC`) at twice the stated share, so that off-topic queries are three times the share.
    """
    import random

    t = json.loads(Path(truth_path).read_text(encoding="utf-8"))
    questions = [list(q["queries"].values()) for q in t["questions"]]
    ood = [o["query"] for o in t.get("ood", [])]
    rng = random.Random(seed)
    lines = []
    for week in range(weeks):
        shifted = shift_from_week is not None and week >= shift_from_week
        for i in range(per_week):
            u = rng.random()
            if shifted and u < 2 * off_topic_share:
                q = rng.choice(OFF_TOPIC)
            elif u < (3 if shifted else 1) * off_topic_share:
                q = rng.choice(ood)
            else:
                q = rng.choice(rng.choice(questions))
            when = WEEK1.replace(hour=0) + timedelta(days=7 * week, seconds=i * (7 * 86_400 // per_week))
            lines.append(json.dumps({"query": q, "time": when.isoformat().replace("+00:00", "Z")}))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

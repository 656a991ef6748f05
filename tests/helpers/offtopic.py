"""Hand-written off-topic queries for the tests."""

from __future__ import annotations

#: English off-topic queries added to ``data/de-haushalt`` so that its English slice has off-topic queries of its
#: own (the shipped file has one English off-topic query of four).
ENGLISH_OOD = ["How do I change the oil in my car?", "What is the capital of Australia?",
               "How do I reset the password of my wifi router?", "Which programming language should I learn first?",
               "How long is a flight from London to New York?", "What are the rules of cricket?",
               "How do I file my tax return online?", "How can I improve my credit score?"]

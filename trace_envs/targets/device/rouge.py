"""ROUGE-L F-measure as ToolSandbox scores message text (rouge-score's tokenizer + Porter stemming).

Tokenisation: lower-case, every run of non-``[a-z0-9]`` characters becomes a space, split, and
tokens longer than 3 characters are Porter-stemmed the way NLTK's default mode does it (the 1980
algorithm with NLTK's documented extensions: its irregular forms, y→i only after a consonant,
-ies→-ie in four-letter words, -alli re-run through step 2, -bli/-fulli/-lessli/-logi, and a
two-letter vowel-consonant word counted as ending in cvc).
"""

from __future__ import annotations

import re
from functools import lru_cache

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    pattern = "".join("c" if _is_consonant(stem, i) else "v" for i in range(len(stem)))
    return len(re.findall(r"v+c+", pattern))


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    if len(word) == 2:
        return not _is_consonant(word, 0) and _is_consonant(word, 1)
    if len(word) < 3:
        return False
    i = len(word) - 1
    return (
        _is_consonant(word, i - 2)
        and not _is_consonant(word, i - 1)
        and _is_consonant(word, i)
        and word[-1] not in "wxy"
    )


def _replace(word: str, suffix: str, replacement: str, condition: int) -> str | None:
    if word.endswith(suffix):
        stem = word[: len(word) - len(suffix)]
        return stem + replacement if _measure(stem) > condition else word
    return None


_STEP2 = [
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("fulli", "ful"), ("lessli", "less"),
]  # fmt: skip
_IRREGULAR = {
    "skies": "sky", "sky": "sky", "dying": "die", "lying": "lie", "tying": "tie", "news": "news",
    "innings": "inning", "inning": "inning", "outings": "outing", "outing": "outing", "cannings": "canning",
    "canning": "canning", "howe": "howe", "proceed": "proceed", "exceed": "exceed", "succeed": "succeed",
}  # fmt: skip
_STEP3 = [("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")]
_STEP4 = [
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
    "iti", "ous", "ive", "ize",
]  # fmt: skip


def _step2(word: str) -> str:
    if word.endswith("alli") and _measure(word[:-4]) > 0:
        return _step2(word[:-4] + "al")
    if word.endswith("logi"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix, replacement in _STEP2:
        replaced = _replace(word, suffix, replacement, 0)
        if replaced is not None:
            return replaced
    return word


@lru_cache(maxsize=4096)
def porter_stem(word: str) -> str:
    """The Porter stem of a lower-case word, as NLTK's ``PorterStemmer()`` (NLTK_EXTENSIONS mode) gives it."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 2:
        return word
    # step 1a
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies"):
        word = word[:-3] + "ie" if len(word) == 4 else word[:-2]
    elif word.endswith("ss"):
        pass
    elif word.endswith("s"):
        word = word[:-1]
    # step 1b
    extra = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif word.endswith("ed") and _has_vowel(word[:-2]):
        word, extra = word[:-2], True
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        word, extra = word[:-3], True
    if extra:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # step 1c: y -> i after a consonant that is not the first letter
    if word.endswith("y") and len(word) > 2 and _is_consonant(word, len(word) - 2):
        word = word[:-1] + "i"
    word = _step2(word)
    for suffix, replacement in _STEP3:
        replaced = _replace(word, suffix, replacement, 0)
        if replaced is not None:
            word = replaced
            break
    # step 4
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                word = stem
            break
    # step 5
    if word.endswith("e"):
        stem = word[:-1]
        if _measure(stem) > 1 or (_measure(stem) == 1 and not _cvc(stem)):
            word = stem
    if _measure(word) > 1 and _double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    tokens = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    return [porter_stem(t) if len(t) > 3 else t for t in tokens if t]


def _lcs(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


@lru_cache(maxsize=16384)
def rouge_l(reference: str, prediction: str) -> float:
    """ROUGE-L F-measure of ``prediction`` against ``reference`` (0 when either has no tokens)."""
    ref, pred = tokenize(reference), tokenize(prediction)
    if not ref or not pred:
        return 0.0
    lcs = _lcs(ref, pred)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)

"""The relation verbs the offline extractor reads between two names: a table of common verb forms to their
relation type, and a rule for regular past tenses (-ed, -ied) and -izes/-ates presents."""

from __future__ import annotations

_COMMON_VERBS = {
    "is": "IS",
    "are": "IS",
    "was": "IS",
    "were": "IS",
    "has": "HAS",
    "have": "HAS",
    "had": "HAS",
    "uses": "USE",
    "used": "USE",
    "use": "USE",
    "using": "USE",
    "developed": "DEVELOP",
    "develops": "DEVELOP",
    "created": "CREATE",
    "creates": "CREATE",
    "founded": "FOUND",
    "acquired": "ACQUIRE",
    "acquires": "ACQUIRE",
    "owns": "OWN",
    "owned": "OWN",
    "proposed": "PROPOSE",
    "proposes": "PROPOSE",
    "introduced": "INTRODUCE",
    "introduces": "INTRODUCE",
    "extends": "EXTEND",
    "extended": "EXTEND",
    "describes": "DESCRIBE",
    "described": "DESCRIBE",
    "includes": "INCLUDE",
    "included": "INCLUDE",
    "contains": "CONTAIN",
    "contained": "CONTAIN",
    "requires": "REQUIRE",
    "required": "REQUIRE",
    "provides": "PROVIDE",
    "provided": "PROVIDE",
    "supports": "SUPPORT",
    "supported": "SUPPORT",
    "implements": "IMPLEMENT",
    "implemented": "IMPLEMENT",
    "compiles": "COMPILE",
    "compiled": "COMPILE",
    "produces": "PRODUCE",
    "produced": "PRODUCE",
    "leads": "LEAD",
    "led": "LEAD",
    "joined": "JOIN",
    "joins": "JOIN",
    "published": "PUBLISH",
    "wrote": "WRITE",
    "written": "WRITE",
    "writes": "WRITE",
    "built": "BUILD",
    "builds": "BUILD",
    "runs": "RUN",
    "ran": "RUN",
    "replaced": "REPLACE",
    "replaces": "REPLACE",
    "based": "BASE",
    "outperforms": "OUTPERFORM",
    "outperformed": "OUTPERFORM",
    "improves": "IMPROVE",
    "improved": "IMPROVE",
    "located": "LOCATE",
    "born": "BEAR",
    "married": "MARRY",
    "won": "WIN",
    "wins": "WIN",
    "signed": "SIGN",
    "signs": "SIGN",
    "issued": "ISSUE",
    "issues": "ISSUE",
    "funded": "FUND",
    "funds": "FUND",
    "employs": "EMPLOY",
    "employed": "EMPLOY",
    "manages": "MANAGE",
    "managed": "MANAGE",
}
_NOT_VERBS = {"need", "speed", "feed", "seed", "bed", "red", "based", "embedded", "hundred", "indeed"}


def verb_lemma(word: str) -> str | None:
    """The relation type a verb form names (MANAGE for 'managed'), None for a word that is not one."""
    lower = word.lower()
    if lower in _COMMON_VERBS:
        return _COMMON_VERBS[lower]
    if not word.isalpha() or not word.islower() or len(word) < 5 or lower in _NOT_VERBS:
        return None
    if lower.endswith("ied"):
        return (lower[:-3] + "y").upper()
    if lower.endswith("ed"):
        stem = lower[:-2]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "ls":
            stem = stem[:-1]
        elif stem.endswith(("at", "iz", "ur", "uc", "ov", "iv", "ag", "ud")):
            stem += "e"
        return stem.upper()
    if lower.endswith("izes") or lower.endswith("ates"):
        return lower[:-1].upper()
    return None

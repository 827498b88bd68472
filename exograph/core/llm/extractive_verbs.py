"""The extractive reader's closed word classes of English verbs (exograph/core/llm/extractive_text.py). Pure."""

from __future__ import annotations

# The irregular past forms of common verbs, to their base: "won" is read as "win", "built" as "build". A closed
# class of English ("found" is left out: it is also the base of "founded").
_IRREGULAR = {
    past: base
    for base, forms in (
        ("win", "won"), ("build", "built"), ("make", "made"), ("lead", "led"), ("run", "ran"), ("sell", "sold"),
        ("buy", "bought"), ("write", "wrote written"), ("take", "took taken"), ("give", "gave given"),
        ("hold", "held"), ("begin", "began begun"), ("grow", "grew grown"), ("teach", "taught"),
        ("bring", "brought"), ("think", "thought"), ("meet", "met"), ("keep", "kept"), ("lose", "lost"),
        ("spend", "spent"), ("send", "sent"), ("go", "went gone"), ("come", "came"), ("become", "became"),
        ("fall", "fell fallen"), ("fly", "flew flown"), ("drive", "drove driven"), ("choose", "chose chosen"),
        ("speak", "spoke spoken"), ("stand", "stood"), ("sing", "sang sung"), ("rise", "rose risen"),
        ("pay", "paid"), ("say", "said"), ("tell", "told"), ("see", "saw seen"), ("know", "knew known"),
        ("draw", "drew drawn"), ("shoot", "shot"), ("fight", "fought"), ("catch", "caught"), ("seek", "sought"),
        ("strike", "struck"), ("wear", "wore worn"), ("break", "broke broken"), ("ride", "rode ridden"),
        ("get", "got gotten"), ("feed", "fed"), ("breed", "bred"), ("deal", "dealt"), ("feel", "felt"),
        ("mean", "meant"), ("lend", "lent"), ("eat", "ate eaten"), ("throw", "threw thrown"),
        ("withdraw", "withdrew withdrawn"), ("oversee", "oversaw overseen"), ("overtake", "overtook overtaken"),
        ("rebuild", "rebuilt"), ("understand", "understood"), ("undertake", "undertook undertaken"),
        ("forbid", "forbade forbidden"), ("forgive", "forgave forgiven"), ("hide", "hid hidden"),
        ("bear", "bore"), ("sink", "sank sunk"), ("swim", "swam swum"), ("freeze", "froze frozen"),
    )
    for past in forms.split()
}  # fmt: skip

"""Value pools of the laboratory world: names, places and other attribute values.

Pools are fixed lists so that every fact is a uniform draw from a known set: a model that
never saw a fact has a chance accuracy of 1 / len(pool) for it, which the book reports.
"""

from __future__ import annotations

import random

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "st", "th", "sh")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_CODAS = ("", "n", "r", "l", "s", "th", "m", "nd", "rk")


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def invented_word(rng: random.Random, syllables: int = 2) -> str:
    """A pronounceable capitalised word that belongs to no language."""
    return "".join(_syllable(rng) for _ in range(syllables)).capitalize()


def person_name(rng: random.Random) -> str:
    """A fictitious first and last name, e.g. 'Brenal Thouvik'."""
    return f"{invented_word(rng, rng.choice((2, 2, 3)))} {invented_word(rng, rng.choice((2, 3)))}"


CITIES = (
    "Valmora", "Quillstead", "Orravan", "Tesselport", "Brindlemoor", "Caskhollow", "Dunmarsh", "Elderwick",
    "Fenrow", "Galloway Reach", "Harrowgate", "Ivel", "Junipra", "Kestrel Bay", "Lornholm", "Marrowdale",
    "Northwend", "Ostrava Minor", "Pellucid", "Ravensmere", "Saltcombe", "Thistlegate", "Umberfall", "Vessen",
)
GENRES = (
    "mystery", "science fiction", "fantasy", "historical", "romance", "horror", "crime", "adventure",
    "satire", "literary", "war", "thriller", "gothic", "western", "dystopian", "magical realist",
)
FATHERS = (
    "baker", "carpenter", "doctor", "sailor", "teacher", "farmer", "lawyer", "painter", "miner", "pilot",
    "tailor", "chemist", "soldier", "librarian", "blacksmith", "banker", "fisherman", "watchmaker",
)
MOTHERS = FATHERS
ADJECTIVES = (
    "Silent", "Crimson", "Hidden", "Last", "Broken", "Golden", "Distant", "Hollow", "Frozen", "Secret",
    "Burning", "Endless", "Quiet", "Forgotten", "Wandering", "Silver",
)
NOUNS = (
    "Harbor", "Garden", "Lantern", "River", "Mirror", "Orchard", "Tower", "Compass", "Winter", "Letter",
    "Bridge", "Island", "Clock", "Forest", "Crown", "Window",
)
AWARDS = (
    "Marlow Prize", "Golden Quill Award", "Vessen Medal", "Northwend Book Prize", "Amber Pen Award",
    "Halcyon Prize", "Tesselport Laurel", "Iron Lantern Award", "Corvid Prize", "Saltcombe Medal",
    "Blue Heron Award", "Ravensmere Prize",
)
LANGUAGES = ("Valmoran", "Orrish", "Kestrelian", "Dunmarsh Gaelic", "Tesselic", "Lornese", "Fenric", "Umbrian")
THEMES = (
    "exile", "memory", "family", "betrayal", "the sea", "war", "faith", "grief", "ambition", "childhood",
    "justice", "loneliness", "freedom", "time",
)
PETS = ("cat", "parrot", "tortoise", "greyhound", "ferret", "goat", "rabbit", "owl", "lizard", "pony")

ATTRIBUTE_POOLS = {
    "city": CITIES, "year": tuple(str(y) for y in range(1931, 1996)), "genre": GENRES, "father": FATHERS,
    "mother": MOTHERS, "award": AWARDS, "language": LANGUAGES, "theme": THEMES, "pet": PETS,
}

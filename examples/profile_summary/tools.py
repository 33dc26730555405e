"""Profile fetch -> summarize: the smallest useful plan."""

from __future__ import annotations

from typing_extensions import TypedDict

from obelisk import tool


class Profile(TypedDict):
    id: str
    name: str
    city: str
    interests: list[str]


PROFILES: dict[str, Profile] = {
    "u-7": {"id": "u-7", "name": "Ada", "city": "Lyon", "interests": ["chess", "climbing"]},
}


@tool(pure=True)
def fetch_profile(user_id: str) -> Profile:
    """Look up a user profile by id; raises KeyError for an unknown id."""
    return PROFILES[user_id]


@tool(pure=True)
def summarize_profile(profile: Profile, max_words: int = 20) -> str:
    """One sentence about a profile, cut to max_words words."""
    likes = " and ".join(profile["interests"])
    text = f"{profile['name']} lives in {profile['city']} and likes {likes}."
    return " ".join(text.split()[:max_words])

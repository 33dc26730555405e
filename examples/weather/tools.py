"""Weather: branch to the park or the movies, then join on one path.

The standard ``branch`` tool routes the weather to the first alternative of its
output path when the condition holds, else to the second.  Exactly one of
``plan_park`` and ``plan_movie`` runs (the other is skipped); both write
``†state.activity``, which is not a conflict because they are exclusive.
"""

from __future__ import annotations

from typing_extensions import TypedDict

from obelisk import tool


class Weather(TypedDict):
    city: str
    sunny: bool
    celsius: float


FORECAST = {"Paris": (True, 24.0), "London": (False, 14.5)}


@tool(pure=True)
def get_weather(city: str) -> Weather:
    """Today's weather for a city (temperature in degrees Celsius)."""
    sunny, celsius = FORECAST[city]
    return {"city": city, "sunny": sunny, "celsius": celsius}


@tool(pure=True)
def plan_park(weather: Weather) -> str:
    """An outdoor plan for a sunny day."""
    return f"picnic in the park ({weather['celsius']:g} °C)"


@tool(pure=True)
def plan_movie(weather: Weather) -> str:
    """An indoor plan for a grey day."""
    return f"a film at the cinema ({weather['celsius']:g} °C outside)"


@tool(pure=True)
def announce(activity: str, city: str) -> str:
    """The day's plan as one line."""
    return f"Today in {city}: {activity}."

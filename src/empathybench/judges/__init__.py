"""Judges held to evidence (specs/judges.md): how LLM judges agree with people and with each other, from released
ratings (MentalAlign-70k first) and from the user's own `judge validate` reports; beside atlas/, on the same floor."""

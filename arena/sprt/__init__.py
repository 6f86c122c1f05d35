"""``arena sprt``: is the candidate stronger than the baseline? (GSPRT on duplicate blocks)."""

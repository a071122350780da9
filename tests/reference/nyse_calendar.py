"""NYSE sessions and holidays (by rule) from pandas-market-calendars.

Input JSON: {"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"}. Output: the session
dates, each regular holiday's observed dates by rule name, and the ad-hoc
closures."""
import json
import sys

import pandas_market_calendars as mcal


def main():
    req = json.load(sys.stdin)
    nyse = mcal.get_calendar("NYSE")
    sessions = [str(d.date()) for d in nyse.valid_days(req["start"], req["end"])]
    rules = {}
    for day, name in nyse.regular_holidays.holidays(req["start"], req["end"], return_name=True).items():
        if day.weekday() < 5:
            rules.setdefault(name, []).append(str(day.date()))
    adhoc = sorted(str(d.date()) for d in nyse.adhoc_holidays if req["start"] <= str(d.date()) <= req["end"])
    json.dump({"sessions": sessions, "rules": rules, "adhoc": adhoc}, sys.stdout)


if __name__ == "__main__":
    main()

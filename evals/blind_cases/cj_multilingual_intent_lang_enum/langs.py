"""Language registry shared by the tokenizer, the router and the model."""
from enum import IntEnum


class Lang(IntEnum):
    EN = 0
    DE = 1
    FR = 2
    ES = 3
    IT = 4
    PT = 5
    NL = 6
    PL = 7
    SV = 8
    TR = 9
    JA = 10
    KO = 11

    @classmethod
    def from_code(cls, code: str) -> "Lang":
        return cls[code.upper()]


# rough share of production traffic per language (used by the load generator)
TRAFFIC_SHARE = {
    Lang.EN: 0.30, Lang.DE: 0.12, Lang.FR: 0.10, Lang.ES: 0.10, Lang.IT: 0.06,
    Lang.PT: 0.06, Lang.NL: 0.05, Lang.PL: 0.05, Lang.SV: 0.04, Lang.TR: 0.04,
    Lang.JA: 0.04, Lang.KO: 0.04,
}

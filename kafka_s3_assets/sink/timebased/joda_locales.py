"""Locale text for Joda patterns: month and weekday names, AM/PM, eras.

Joda takes these from the JVM's ``DateFormatSymbols`` for ``new Locale(locale)``, i.e. from the JDK's
CLDR data, which changes between JDK releases for abbreviations ("Sep" / "Sept", "févr." ...). Only
text that has been stable across JDKs is tabled: every field for English, and the full month and
weekday names for a few other languages. A path.format that needs text we do not have is refused at
config time, never printed differently from the reference.

``new Locale("en-US")`` or ``new Locale("en_US")`` makes the *language* ``en-us`` / ``en_us``, which
Java does not know; so the locale string is matched as a whole, lowercased, like Java does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocaleText:
    months: tuple[str, ...] | None = None  # MMMM, January first
    short_months: tuple[str, ...] | None = None  # MMM
    weekdays: tuple[str, ...] | None = None  # EEEE, Monday first
    short_weekdays: tuple[str, ...] | None = None  # E, EE, EEE
    halfdays: tuple[str, str] | None = None  # a
    eras: tuple[str, str] | None = None  # G: BC, AD


_TABLE: dict[str, LocaleText] = {
    "en": LocaleText(
        months=(
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ),
        short_months=("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
        weekdays=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        short_weekdays=("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
        halfdays=("AM", "PM"),
        eras=("BC", "AD"),
    ),
    "de": LocaleText(
        months=(
            "Januar",
            "Februar",
            "März",
            "April",
            "Mai",
            "Juni",
            "Juli",
            "August",
            "September",
            "Oktober",
            "November",
            "Dezember",
        ),
        weekdays=("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    ),
    "fr": LocaleText(
        months=(
            "janvier",
            "février",
            "mars",
            "avril",
            "mai",
            "juin",
            "juillet",
            "août",
            "septembre",
            "octobre",
            "novembre",
            "décembre",
        ),
        weekdays=("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    ),
    "es": LocaleText(
        months=(
            "enero",
            "febrero",
            "marzo",
            "abril",
            "mayo",
            "junio",
            "julio",
            "agosto",
            "septiembre",
            "octubre",
            "noviembre",
            "diciembre",
        ),
        weekdays=("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    ),
    "it": LocaleText(
        months=(
            "gennaio",
            "febbraio",
            "marzo",
            "aprile",
            "maggio",
            "giugno",
            "luglio",
            "agosto",
            "settembre",
            "ottobre",
            "novembre",
            "dicembre",
        ),
        weekdays=("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
    ),
    "nl": LocaleText(
        months=(
            "januari",
            "februari",
            "maart",
            "april",
            "mei",
            "juni",
            "juli",
            "augustus",
            "september",
            "oktober",
            "november",
            "december",
        ),
        weekdays=("maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"),
    ),
    "pt": LocaleText(
        months=(
            "janeiro",
            "fevereiro",
            "março",
            "abril",
            "maio",
            "junho",
            "julho",
            "agosto",
            "setembro",
            "outubro",
            "novembro",
            "dezembro",
        ),
        weekdays=("segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"),
    ),
}

_EMPTY = LocaleText()


def java_language(locale: str) -> str:
    """The language Java's ``new Locale(locale)`` keeps: the whole string, lowercased."""
    return locale.lower()


def locale_text(locale: str) -> LocaleText:
    return _TABLE.get(java_language(locale), _EMPTY)


def languages_with(attribute: str) -> list[str]:
    """The languages whose table has ``attribute`` (for error messages)."""
    return sorted(lang for lang, text in _TABLE.items() if getattr(text, attribute) is not None)

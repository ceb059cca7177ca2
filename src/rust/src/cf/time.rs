//! CF times: "<unit> since <date>" units with the reference date of the
//! proleptic Gregorian calendar, as seconds since 1970.

/// Seconds in one of CF's time units (UDUNITS spellings xarray accepts).
pub(super) fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "days" | "day" | "d" => 86400.0,
        "hours" | "hour" | "hr" | "h" => 3600.0,
        "minutes" | "minute" | "min" => 60.0,
        "seconds" | "second" | "sec" | "s" => 1.0,
        "milliseconds" | "millisecond" | "msec" | "ms" => 1e-3,
        "microseconds" | "microsecond" | "usec" | "us" => 1e-6,
        "nanoseconds" | "nanosecond" | "nsec" | "ns" => 1e-9,
        _ => return None,
    })
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The reference date of "<unit> since <date>" in seconds since 1970:
/// "1990-01-01", "1990-1-1 6:00", "1990-01-01T00:00:00.5Z", with an
/// optional UTC offset ("+05:30", " -3") or "UTC".
fn parse_reference(text: &str) -> Option<f64> {
    let t = text.trim();
    let (date, rest) = match t.find([' ', 'T']) {
        Some(i) => (&t[..i], t[i + 1..].trim()),
        None => (t, ""),
    };
    let neg = date.starts_with('-');
    let mut parts = date.trim_start_matches('-').split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map_or(Some(1), |p| p.parse().ok())?;
    let d: i64 = parts.next().map_or(Some(1), |p| p.parse().ok())?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if neg { -y } else { y };
    let mut secs = days_from_civil(y, m, d) as f64 * 86400.0;
    let rest = rest.trim_end_matches('Z').trim();
    let rest = rest.strip_suffix("UTC").unwrap_or(rest).trim();
    if rest.is_empty() {
        return Some(secs);
    }
    // Time of day, then an optional offset from UTC.
    let split = rest[1..].find(['+', '-', ' ']).map(|i| i + 1);
    let (clock, zone) = match split {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let mut hms = clock.split(':');
    let h: f64 = hms.next()?.parse().ok()?;
    let mi: f64 = hms.next().map_or(Some(0.0), |p| p.parse().ok())?;
    let s: f64 = hms.next().map_or(Some(0.0), |p| p.parse().ok())?;
    secs += h * 3600.0 + mi * 60.0 + s;
    if !zone.is_empty() {
        let sign = if zone.starts_with('-') { -1.0 } else { 1.0 };
        let z = zone.trim_start_matches(['+', '-']);
        let (zh, zm) = match z.split_once(':') {
            Some((a, b)) => (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?),
            None if z.len() == 4 => (z[..2].parse().ok()?, z[2..].parse().ok()?),
            None => (z.parse().ok()?, 0.0),
        };
        secs -= sign * (zh * 3600.0 + zm * 60.0);
    }
    Some(secs)
}

/// "<unit> since <date>" -> (unit, seconds per unit, reference in
/// seconds since 1970); None when `units` is not of that form.
pub fn parse_time_units(units: &str) -> Option<(String, f64, f64)> {
    let (unit, date) = units.split_once(" since ")?;
    let unit = unit.trim();
    Some((
        unit.to_string(),
        unit_seconds(unit)?,
        parse_reference(date)?,
    ))
}

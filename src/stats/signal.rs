//! Signal detection: sensitivity d' = z(hit rate) - z(false-alarm rate).
//!
//! In the blind study the "signal" is a generated (fake) clip and the response "yes" is
//! judging it fake: a hit is a fake clip judged fake, a false alarm a real clip judged
//! fake. d' = 0 means people cannot tell generated from real clips.
//!
//! z(0) and z(1) are infinite, so a rate of exactly 0 or 1 needs a correction; the
//! caller picks one with [`RateCorrection`] and the result says whether it was applied.

use serde::Serialize;

use super::{finite, normal_quantile};

/// How to keep rates of exactly 0 or 1 finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateCorrection {
    /// Macmillan & Kaplan (1985), the "1/(2N) rule": a rate of 0 becomes `1/(2N)` and
    /// a rate of 1 becomes `1 - 1/(2N)`, N being that rate's number of trials; other
    /// rates are left alone.
    HalfTrial,
    /// Hautus (1995) log-linear rule: both rates become `(count + 0.5)/(N + 1)`,
    /// always (whether or not a rate is extreme), which keeps the estimator's bias
    /// the same for every cell.
    LogLinear,
}

/// d' with the rates it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DPrime {
    /// `z(H) - z(F)` with the corrected rates.
    pub d_prime: f64,
    /// Response bias `c = -(z(H) + z(F))/2`.
    pub criterion: f64,
    /// Raw hit rate, hits / signal trials.
    pub hit_rate: f64,
    /// Raw false-alarm rate, false alarms / noise trials.
    pub false_alarm_rate: f64,
    /// The hit rate d' was computed from.
    pub used_hit_rate: f64,
    /// The false-alarm rate d' was computed from.
    pub used_false_alarm_rate: f64,
    /// Whether a rate was changed by the correction.
    pub corrected: bool,
}

/// d' = z(H) - z(F), with z the standard normal quantile. `None` when either number of
/// trials is 0 or a count exceeds its trials.
pub fn d_prime(
    hits: u64,
    signal_trials: u64,
    false_alarms: u64,
    noise_trials: u64,
    correction: RateCorrection,
) -> Option<DPrime> {
    if signal_trials == 0
        || noise_trials == 0
        || hits > signal_trials
        || false_alarms > noise_trials
    {
        return None;
    }
    let rate = |c: u64, n: u64| c as f64 / n as f64;
    let adjust = |c: u64, n: u64| -> f64 {
        let nf = n as f64;
        match correction {
            RateCorrection::HalfTrial => {
                if c == 0 {
                    0.5 / nf
                } else if c == n {
                    1.0 - 0.5 / nf
                } else {
                    c as f64 / nf
                }
            }
            RateCorrection::LogLinear => (c as f64 + 0.5) / (nf + 1.0),
        }
    };
    let h = rate(hits, signal_trials);
    let f = rate(false_alarms, noise_trials);
    let uh = adjust(hits, signal_trials);
    let uf = adjust(false_alarms, noise_trials);
    let zh = normal_quantile(uh)?;
    let zf = normal_quantile(uf)?;
    Some(DPrime {
        d_prime: finite(zh - zf)?,
        criterion: finite(-(zh + zf) / 2.0)?,
        hit_rate: h,
        false_alarm_rate: f,
        used_hit_rate: uh,
        used_false_alarm_rate: uf,
        corrected: uh != h || uf != f,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values() {
        let d = d_prime(69, 100, 31, 100, RateCorrection::HalfTrial).unwrap();
        // z(0.69) = 0.49585034734745304, z(0.31) = -z(0.69).
        assert!(
            (d.d_prime - 2.0 * 0.49585034734745304).abs() < 1e-12,
            "{}",
            d.d_prime
        );
        assert!(d.criterion.abs() < 1e-12);
        assert!(!d.corrected);
    }

    #[test]
    fn extreme_rates_are_corrected() {
        let d = d_prime(50, 50, 0, 50, RateCorrection::HalfTrial).unwrap();
        assert!(d.corrected);
        assert_eq!(d.used_hit_rate, 1.0 - 0.01);
        assert_eq!(d.used_false_alarm_rate, 0.01);
        // 2 z(0.99).
        assert!(
            (d.d_prime - 2.0 * 2.3263478740408408).abs() < 1e-12,
            "{}",
            d.d_prime
        );
        let l = d_prime(50, 50, 0, 50, RateCorrection::LogLinear).unwrap();
        assert_eq!(l.used_hit_rate, 50.5 / 51.0);
        assert!(
            (l.d_prime - 4.667537149614277).abs() < 1e-12,
            "{}",
            l.d_prime
        );
        // Chance performance gives d' = 0.
        let c = d_prime(10, 20, 10, 20, RateCorrection::HalfTrial).unwrap();
        assert!(c.d_prime.abs() < 1e-15);
    }

    #[test]
    fn invalid_counts() {
        assert_eq!(d_prime(1, 0, 0, 5, RateCorrection::HalfTrial), None);
        assert_eq!(d_prime(6, 5, 0, 5, RateCorrection::LogLinear), None);
        assert_eq!(d_prime(0, 5, 0, 0, RateCorrection::LogLinear), None);
    }
}

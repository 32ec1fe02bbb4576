//! Timing on a shared, noisy machine: the baseline and the subject are
//! sampled in alternation (so a burst of load hits both), and each is
//! summarised by its median.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long to spend, from the environment.
pub struct Settings {
    /// `JP_BENCH_QUICK` is set: a smoke run with few samples.
    pub quick: bool,
    /// Time to spend sampling one document at one chunk size.
    pub cell_budget: Duration,
    /// Samples taken of each side even when the budget is spent.
    pub min_samples: usize,
    /// Samples after which a cell stops even with budget left.
    pub max_samples: usize,
    /// Short runs are repeated until one sample lasts this long, so timer
    /// resolution and call overhead do not count.
    pub sample_target: Duration,
    /// Time for the quadratic baseline at one chunk size.
    pub quadratic_budget: Duration,
}

impl Settings {
    pub fn from_env() -> Self {
        let quick = std::env::var_os("JP_BENCH_QUICK").is_some_and(|value| value != "0");
        if quick {
            Self {
                quick,
                cell_budget: Duration::from_millis(150),
                min_samples: 3,
                max_samples: 51,
                sample_target: Duration::from_micros(500),
                quadratic_budget: Duration::from_millis(300),
            }
        } else {
            Self {
                quick,
                cell_budget: Duration::from_millis(1500),
                min_samples: 7,
                max_samples: 201,
                sample_target: Duration::from_millis(2),
                quadratic_budget: Duration::from_secs(3),
            }
        }
    }
}

/// Medians and minimums of interleaved samples, in seconds per run.
pub struct Comparison {
    pub baseline: f64,
    pub subject: f64,
    /// The fastest sample of each side: load on a shared machine only ever
    /// adds time, so with few samples the minimums are the steadier pair.
    pub best_baseline: f64,
    pub best_subject: f64,
    /// Samples taken of each side.
    pub samples: usize,
}

impl Comparison {
    /// Subject time over baseline time (medians).
    pub fn ratio(&self) -> f64 {
        self.subject / self.baseline
    }

    /// Subject time over baseline time, each side's fastest sample.
    pub fn best_ratio(&self) -> f64 {
        self.best_subject / self.best_baseline
    }
}

/// Times `baseline` and `subject`, alternating which goes first.
pub fn compare<B, S>(
    settings: &Settings,
    mut baseline: impl FnMut() -> B,
    mut subject: impl FnMut() -> S,
) -> Comparison {
    let mut baseline_out = Vec::new();
    let mut subject_out = Vec::new();
    let baseline_iters = calibrate(settings, &mut baseline, &mut baseline_out);
    let subject_iters = calibrate(settings, &mut subject, &mut subject_out);

    let mut baseline_samples = Vec::new();
    let mut subject_samples = Vec::new();
    let start = Instant::now();
    while baseline_samples.len() < settings.max_samples
        && (baseline_samples.len() < settings.min_samples || start.elapsed() < settings.cell_budget)
    {
        if baseline_samples.len().is_multiple_of(2) {
            baseline_samples.push(sample(baseline_iters, &mut baseline, &mut baseline_out));
            subject_samples.push(sample(subject_iters, &mut subject, &mut subject_out));
        } else {
            subject_samples.push(sample(subject_iters, &mut subject, &mut subject_out));
            baseline_samples.push(sample(baseline_iters, &mut baseline, &mut baseline_out));
        }
    }
    let best = |samples: &[f64]| samples.iter().copied().fold(f64::INFINITY, f64::min);
    Comparison {
        best_baseline: best(&baseline_samples),
        best_subject: best(&subject_samples),
        baseline: median(&mut baseline_samples),
        subject: median(&mut subject_samples),
        samples: baseline_samples.len(),
    }
}

/// Seconds per run over `iters` runs. Results are kept and dropped after
/// the clock stops, so freeing them is not measured.
fn sample<T>(iters: usize, run: &mut impl FnMut() -> T, keep: &mut Vec<T>) -> f64 {
    keep.clear();
    keep.reserve(iters);
    let start = Instant::now();
    for _ in 0..iters {
        keep.push(black_box(run()));
    }
    let elapsed = start.elapsed();
    elapsed.as_secs_f64() / iters as f64
}

/// Runs per sample so that a sample lasts `settings.sample_target`; doubles
/// as warm-up.
fn calibrate<T>(settings: &Settings, run: &mut impl FnMut() -> T, keep: &mut Vec<T>) -> usize {
    let target = settings.sample_target.as_secs_f64();
    let mut iters = 1;
    loop {
        let total = sample(iters, run, keep) * iters as f64;
        if total >= target || iters >= 1 << 20 {
            return iters;
        }
        let scale = if total > 0.0 {
            (target / total * 1.1).clamp(2.0, 100.0)
        } else {
            100.0
        };
        iters = (iters as f64 * scale).ceil() as usize;
    }
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    match samples.len() {
        0 => f64::NAN,
        len if len % 2 == 1 => samples[len / 2],
        len => (samples[len / 2 - 1] + samples[len / 2]) / 2.0,
    }
}

//! The view's work off the frame: a computation on a thread of its own, polled once a frame.
//!
//! The view's background builds (a simulation's chunk meshes, the material's data texels, the
//! shore distance of the water) do not go to Bevy's `AsyncComputeTaskPool`: the editor's long
//! jobs run there (a simulation holds one of its threads for the whole run, a build or a loupe
//! another), and on a machine with few cores the pool has a single thread, so a view build queued
//! behind a simulation would show nothing until the simulation ended. A thread per build costs
//! tens of microseconds, against builds of tens to hundreds of milliseconds at most a few times a
//! second; the heavy loops inside still run on every core through rayon.

use std::thread::JoinHandle;

/// A computation running on a thread of its own.
pub struct Background<T> {
    state: State<T>,
}

enum State<T> {
    Running(JoinHandle<T>),
    /// Computed on the caller's thread (no thread could be started).
    Ready(T),
    Taken,
}

/// What [`Background::poll`] found.
pub enum Polled<T> {
    /// Still running.
    Running,
    /// Done, with its result (taken: later polls say [`Polled::Gone`]).
    Done(T),
    /// It panicked, or its result was already taken.
    Gone,
}

impl<T: Send + 'static> Background<T> {
    /// Starts `work` on a new thread named `name`; where no thread can be started, runs it at
    /// once on the caller's.
    pub fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> Self {
        let cell = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
        let inner = cell.clone();
        let take = |c: &std::sync::Mutex<Option<_>>| c.lock().ok().and_then(|mut g| g.take());
        let spawned = std::thread::Builder::new().name(name.to_string()).spawn(move || {
            let f = take(&inner).expect("the work is taken once");
            f()
        });
        let state = match spawned {
            Ok(handle) => State::Running(handle),
            Err(_) => take(&cell).map_or(State::Taken, |f| State::Ready(f())),
        };
        Self { state }
    }
}

impl<T> Background<T> {
    /// Whether it is still running.
    pub fn running(&self) -> bool {
        matches!(&self.state, State::Running(h) if !h.is_finished())
    }

    /// Takes the result if the work is done; never blocks.
    pub fn poll(&mut self) -> Polled<T> {
        match std::mem::replace(&mut self.state, State::Taken) {
            State::Running(h) if !h.is_finished() => {
                self.state = State::Running(h);
                Polled::Running
            }
            State::Running(h) => h.join().map_or(Polled::Gone, Polled::Done),
            State::Ready(v) => Polled::Done(v),
            State::Taken => Polled::Gone,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_taken_once_and_a_panic_is_gone() {
        let mut b = Background::spawn("test", || 6 * 7);
        let t = std::time::Instant::now();
        let v = loop {
            match b.poll() {
                Polled::Running => std::thread::sleep(std::time::Duration::from_millis(1)),
                Polled::Done(v) => break v,
                Polled::Gone => panic!("the result was lost"),
            }
            assert!(t.elapsed().as_secs() < 10);
        };
        assert_eq!(v, 42);
        assert!(matches!(b.poll(), Polled::Gone));
        let mut p = Background::spawn("test-panic", || -> u32 { panic!("on purpose") });
        while p.running() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(matches!(p.poll(), Polled::Gone));
    }
}

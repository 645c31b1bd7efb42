//! Bounded fan-out: the glue's one way to run work on many items at once. Plugins never
//! run their own concurrency (no semaphores, join sets or spawned tasks); they call these.
//!
//! Everything runs on the caller's task (the plugins' runtime has one thread): the
//! concurrency is of requests in flight, not of threads.

use std::future::Future;

use futures::channel::{mpsc, oneshot};
use futures::stream::{self, Stream, StreamExt};

/// Runs `work` on every item, at most `limit` at a time, and waits for all of them. The
/// items may arrive while the work runs (a listing still going on): each starts as soon as
/// it arrives and a slot is free.
pub async fn for_each_concurrently<S, F, Fut>(items: S, limit: usize, work: F)
where
    S: Stream,
    F: FnMut(S::Item) -> Fut,
    Fut: Future<Output = ()>,
{
    items.for_each_concurrent(limit.max(1), work).await;
}

/// Runs `work` on every item, at most `limit` at a time, and returns the results in the
/// items' order. A slow item does not hold the others back: the next item starts as soon as
/// any finishes, and the results are put in order at the end.
pub async fn map_concurrently<I, F, Fut, R>(items: I, limit: usize, mut work: F) -> Vec<R>
where
    I: IntoIterator,
    F: FnMut(I::Item) -> Fut,
    Fut: Future<Output = R>,
{
    let mut done: Vec<(usize, R)> = stream::iter(items.into_iter().enumerate())
        .map(|(index, item)| {
            let result = work(item);
            async move { (index, result.await) }
        })
        .buffer_unordered(limit.max(1))
        .collect()
        .await;
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

/// A sender a producer of [`ordered`] sends its items through; `send` waits while the
/// consumer is `ahead` items behind, and fails once the consumer is gone.
pub type Outlet<T> = mpsc::Sender<T>;

/// Runs `produce` for each unit, at most `limit` at a time (in the units' order), and yields
/// what they send, all of the first unit's items, then all of the second's, and so on.
///
/// Each producer may run `ahead` items ahead of the consumer before its `send` waits, and a
/// unit keeps its place among the `limit` until the consumer has taken everything it sent,
/// so memory is bounded by `limit` x (`ahead` + 2) items however many units there are and
/// however slowly the consumer goes, and work overlaps: later units are produced while the
/// consumer still reads an earlier one. The producers run only while the stream is polled;
/// dropping the stream stops them.
pub fn ordered<'a, U, T, P, Fut>(units: Vec<U>, limit: usize, ahead: usize, produce: P) -> impl Stream<Item = T> + 'a
where
    U: 'a,
    T: 'a,
    P: Fn(U, Outlet<T>) -> Fut + 'a,
    Fut: Future<Output = ()> + 'a,
{
    let (producers, items) = ordered_parts(units, limit, ahead, produce);
    // The producers yield nothing themselves: polled beside the ordered receivers, they run
    // as far ahead as the channels allow.
    let producers = stream::once(producers).filter_map(|()| futures::future::ready(None));
    stream::select(producers, items)
}

/// [`ordered`] in its two parts: the future that runs the producers, and the stream of what
/// they send, in order.
///
/// For a consumer that waits on something else between items (forwarding them into another
/// bounded channel): it must poll the producers beside its own waits (see
/// [`forward_ordered`]). A producer left unpolled keeps what it was granted, such as a
/// request slot of a fair semaphore, and whoever waits for that slot waits for ever.
pub fn ordered_parts<'a, U, T, P, Fut>(
    units: Vec<U>,
    limit: usize,
    ahead: usize,
    produce: P,
) -> (impl Future<Output = ()> + 'a, impl Stream<Item = T> + 'a)
where
    U: 'a,
    T: 'a,
    P: Fn(U, Outlet<T>) -> Fut + 'a,
    Fut: Future<Output = ()> + 'a,
{
    let (senders, receivers): (Vec<_>, Vec<_>) = units.iter().map(|_| mpsc::channel(ahead)).unzip();
    // A unit that finished producing still holds what it sent until the consumer takes it:
    // it keeps its slot until then (`taken`), or every short unit after the one being read
    // would finish, free its slot and leave all its items waiting, and memory would grow
    // with the number of units (a listing's small types, each listed whole in advance).
    let (taken_signals, taken): (Vec<_>, Vec<_>) = units.iter().map(|_| oneshot::channel::<()>()).unzip();
    let producers = stream::iter(units.into_iter().zip(senders).zip(taken)).for_each_concurrent(
        limit.max(1),
        move |((u, tx), taken)| {
            let produced = produce(u, tx);
            async move {
                produced.await;
                // Sent (the consumer took it all) or dropped (the consumer is gone): either ends it.
                let _ = taken.await;
            }
        },
    );
    let items = stream::iter(receivers.into_iter().zip(taken_signals)).flat_map(|(items, taken)| {
        let signal = stream::once(async move {
            let _ = taken.send(());
            None
        });
        items.map(Some).chain(signal).filter_map(futures::future::ready)
    });
    (producers, items)
}

/// Runs the producers of [`ordered_parts`] while `forward` consumes their items, until
/// `forward` ends (its result) or the producers end and `forward` drains what they sent.
pub async fn forward_ordered<R>(producers: impl Future<Output = ()>, forward: impl Future<Output = R>) -> R {
    use futures::future::{select, Either};
    let (producers, forward) = (std::pin::pin!(producers), std::pin::pin!(forward));
    match select(forward, producers).await {
        Either::Left((result, _)) => result,
        Either::Right(((), forward)) => forward.await,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::Duration;

    use futures::SinkExt;

    use super::*;

    /// Counts work in flight and remembers the most at once.
    #[derive(Default)]
    struct InFlight {
        now: Cell<usize>,
        most: Cell<usize>,
    }

    impl InFlight {
        async fn during<R>(&self, work: impl Future<Output = R>) -> R {
            self.now.set(self.now.get() + 1);
            self.most.set(self.most.get().max(self.now.get()));
            let r = work.await;
            self.now.set(self.now.get() - 1);
            r
        }
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn map_keeps_the_order_and_the_bound() {
        let flight = InFlight::default();
        let out = map_concurrently(0..20u64, 3, |i| {
            flight.during(async move {
                tokio::time::sleep(Duration::from_millis(20 - i)).await;
                i * 10
            })
        })
        .await;
        assert_eq!(out, (0..20).map(|i| i * 10).collect::<Vec<_>>());
        assert_eq!(flight.most.get(), 3);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn map_is_not_held_back_by_a_slow_item() {
        // The first item is slow: the others all run in the second slot meanwhile, and the
        // results still come out in the items' order.
        let slow_done = Cell::new(false);
        let ran_before_slow = Cell::new(0);
        let out = map_concurrently(0..6u64, 2, |i| {
            let (slow_done, ran_before_slow) = (&slow_done, &ran_before_slow);
            async move {
                if i == 0 {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    slow_done.set(true);
                } else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    if !slow_done.get() {
                        ran_before_slow.set(ran_before_slow.get() + 1);
                    }
                }
                i
            }
        })
        .await;
        assert_eq!(out, (0..6).collect::<Vec<_>>());
        assert_eq!(ran_before_slow.get(), 5);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn for_each_runs_everything_within_the_bound() {
        let (flight, done) = (InFlight::default(), Cell::new(0));
        for_each_concurrently(stream::iter(0..10), 4, |_| {
            flight.during(async {
                tokio::time::sleep(Duration::from_millis(5)).await;
                done.set(done.get() + 1);
            })
        })
        .await;
        assert_eq!((done.get(), flight.most.get()), (10, 4));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn ordered_yields_unit_by_unit_while_later_units_run_ahead() {
        let (flight, started) = (InFlight::default(), Cell::new(0));
        let units: Vec<u64> = (0..6).collect();
        let stream = ordered(units, 2, 1, |u, mut tx: Outlet<(u64, u64)>| {
            let (flight, started) = (&flight, &started);
            async move {
                started.set(started.get() + 1);
                flight
                    .during(async {
                        for i in 0..3 {
                            // Later units are faster: they finish first, and still come out after.
                            tokio::time::sleep(Duration::from_millis(10 * (6 - u))).await;
                            if tx.send((u, i)).await.is_err() {
                                return;
                            }
                        }
                    })
                    .await
            }
        });
        let out: Vec<(u64, u64)> = stream.collect().await;
        let expected: Vec<(u64, u64)> = (0..6).flat_map(|u| (0..3).map(move |i| (u, i))).collect();
        assert_eq!(out, expected);
        assert_eq!((started.get(), flight.most.get()), (6, 2));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn short_units_after_the_one_read_wait_for_it_within_the_bound() {
        // Unit 0 is long; 20 short units follow, each one item. Only `limit` units may hold
        // items at once: the short ones may not all finish and wait with theirs.
        let started = Cell::new(0);
        let stream = ordered((0..21u32).collect(), 3, 1, |u, mut tx: Outlet<u32>| {
            let started = &started;
            async move {
                started.set(started.get() + 1);
                let items = if u == 0 { 50 } else { 1 };
                for _ in 0..items {
                    if tx.send(u).await.is_err() {
                        return;
                    }
                }
            }
        });
        let mut stream = std::pin::pin!(stream);
        assert_eq!(stream.next().await, Some(0));
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(started.get(), 3, "unit 0 and two more, not all 21");
        let rest: Vec<u32> = stream.collect().await;
        let expected: Vec<u32> = std::iter::repeat_n(0, 49).chain(1..21).collect();
        assert_eq!(rest, expected, "everything, in order");
        assert_eq!(started.get(), 21);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_producer_waits_when_the_consumer_is_behind() {
        let sent = Cell::new(0);
        let stream = ordered(vec![()], 1, 2, |(), mut tx: Outlet<u32>| {
            let sent = &sent;
            async move {
                for i in 0..100 {
                    if tx.send(i).await.is_err() {
                        return;
                    }
                    sent.set(sent.get() + 1);
                }
            }
        });
        let mut stream = std::pin::pin!(stream);
        assert_eq!(stream.next().await, Some(0));
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(stream.next().await, Some(1));
        // A channel of 2 plus the sender's own slot: a few items ahead, never all 100.
        assert!(sent.get() <= 5, "{} sent", sent.get());
    }
}

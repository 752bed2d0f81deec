package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The thread-safety the controller documents, exercised: two threads acquire and complete tickets
 * while a third drives the intervals (virtual time, advanced by a counter) and changes the reserve.
 * Not a proof (that would be jcstress), but lost updates in the counters or the queues show up as
 * broken accounting here.
 */
class AdmissionConcurrencyTest {

    private static final long DELTA = 10_000_000L;

    @Test
    void acquireCompleteAndOnIntervalFromThreeThreads_accountingStaysExact() throws Exception {
        AdmissionConfig config = AdmissionConfig.PAPER.toBuilder()
                .capacityCostUnitsPerSecond(2e8)
                .headroom(HeadroomConfig.DEFAULTS.toBuilder()
                        .minPredictions(0)
                        .maxPredictionError(1)
                        .build())
                .build();
        AdmissionController c = new AdmissionController(
                config, List.of(VirtualDisk.of("a", 64L << 30), VirtualDisk.of("b", 8L << 30)), 0);
        int perThread = 20_000;
        ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
        AtomicLong windows = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int worker = w;
                workers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        long offset = ((long) i * 7919 + worker * 4096L) % (8L << 30);
                        Admission a = c.acquire(worker, i % 3 == 0 ? IoKind.WRITE : IoKind.READ, offset, 4096);
                        if (a instanceof Admission.Admitted ad) {
                            assertThat(seen.put(ad.ticket().id(), true)).isNull();
                            ad.ticket().onSuccess(1_000_000 + i % 1000);
                        }
                    }
                    return null;
                }));
            }
            Future<?> ticker = pool.submit(() -> {
                start.await();
                long now = 0;
                int tick = 0;
                while (!stop.get()) {
                    now += DELTA;
                    IntervalReport r = c.onInterval(now);
                    windows.addAndGet(r.borrowWindowCostUnits());
                    for (Ticket t : r.admitted()) {
                        assertThat(seen.put(t.id(), true)).isNull();
                        t.onSuccess(2_000_000);
                    }
                    if (++tick % 50 == 0) {
                        c.setReserveFraction(tick % 100 == 0 ? 0.2 : 0.4);
                    }
                }
                return null;
            });
            start.countDown();
            for (Future<?> f : workers) {
                f.get();
            }
            stop.set(true);
            ticker.get();
        } finally {
            pool.shutdownNow();
        }
        AdmissionStats s = c.stats();
        assertThat(s.admittedRequests() + s.waitingRequests() + s.refusedRequests())
                .isEqualTo(2L * perThread);
        assertThat(s.admittedRequests()).isEqualTo(seen.size());
        assertThat(s.admittedCostUnits()).isLessThanOrEqualTo(s.budgetIssuedCostUnits() + windows.get());
        assertThat(s.completedSuccess()).isEqualTo(seen.size());
        assertThat(s.debtCostUnits()).isNotNegative();
    }
}

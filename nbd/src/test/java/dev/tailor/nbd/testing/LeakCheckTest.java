package dev.tailor.nbd.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

/** The leak check itself: it must see a leak, or the other tests' silence proves nothing. */
class LeakCheckTest {

    @Test
    public void leakDetection_isParanoid() {
        assertThat(LeakCheck.level()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
    }

    @Test
    public void unreleasedBuffer_isReported() {
        leak();
        // The buffer is garbage now; collecting provokes the report (and clears it for afterEach).
        assertThat(LeakCheck.collectLeaks()).anySatisfy(leak -> assertThat(leak).contains("LEAK"));
    }

    private static void leak() {
        LeakCheck.leakOne();
    }
}

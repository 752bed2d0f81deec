package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

class DualTokenPoolTest {

    /** C = 1,000 and r = 0.2: a reserve of 200 and a main pool of 800 at the start. */
    private static DualTokenPool pool() {
        return new DualTokenPool(1_000, 0.2, true);
    }

    @Test
    void reserve_drawnOnlyBySteadySegmentsOnceMainIsEmpty() {
        DualTokenPool p = pool();
        assertThat(p.mainCostUnits()).isEqualTo(800);
        assertThat(p.reserveCostUnits()).isEqualTo(200);
        assertThat(p.tryDraw(700, false)).isTrue();
        // 100 left in main: a hot request of 150 may not touch the reserve.
        assertThat(p.tryDraw(150, false)).isFalse();
        assertThat(p.reserveCostUnits()).isEqualTo(200);
        assertThat(p.deficit()).as("a request the pools could not cover").isTrue();
        // A steady one of 150 empties main (100) first and takes only the rest (50) from the reserve.
        assertThat(p.tryDraw(150, true)).isTrue();
        assertThat(p.mainCostUnits()).isZero();
        assertThat(p.reserveCostUnits()).isEqualTo(150);
        assertThat(p.drawnReserveCostUnits()).isEqualTo(50);
        // Hot: nothing left for it at all.
        assertThat(p.tryDraw(1, false)).isFalse();
        assertThat(p.drawUpTo(500, false)).isZero();
        assertThat(p.drawUpTo(500, true)).isEqualTo(150);
    }

    @Test
    void advance_isDebtRepaidBeforeOtherDebt_oneAtATime_evenWithoutRepayment() {
        // Borrow 300 (debt 300), then advance 1,000: debt 1,300, of which the advance 1,000.
        DualTokenPool p = pool();
        assertThat(p.openBorrowWindow(300)).isEqualTo(300);
        assertThat(p.tryDraw(1_100, false)).isTrue(); // 800 from main, 300 borrowed
        assertThat(p.mayAdvance(2_000)).isTrue();
        p.advance(1_000);
        assertThat(p.mayAdvance(2_000)).as("one at a time, whatever the cost").isFalse();
        assertThat(p.debtCostUnits()).isEqualTo(1_300);
        assertThat(p.advancedCostUnits()).isEqualTo(1_000);
        assertThat(p.deficit()).isTrue();
        // Boundary 1: 800 repaid, all of it to the advance first: 200 of it still outstanding.
        p.replenish(0.2);
        assertThat(p.repaidThisIntervalCostUnits()).isEqualTo(800);
        assertThat(p.debtCostUnits()).isEqualTo(500);
        assertThat(p.advanceOutstandingCostUnits()).isEqualTo(200);
        assertThat(p.mayAdvance(2_000)).isFalse();
        // Boundary 2: the last 200 of the advance and the 300 borrowed; main 300, and a new advance may be made.
        p.replenish(0.2);
        assertThat(p.debtCostUnits()).isZero();
        assertThat(p.advanceOutstandingCostUnits()).isZero();
        assertThat(p.mainCostUnits()).isEqualTo(300);
        assertThat(p.mayAdvance(2_000)).isTrue();

        // Without repayment borrowed cost is forgiven, an advance is not.
        DualTokenPool forgiving = new DualTokenPool(1_000, 0.2, false);
        forgiving.advance(1_500);
        assertThat(forgiving.debtCostUnits()).isEqualTo(1_500);
        forgiving.replenish(0.2);
        assertThat(forgiving.debtCostUnits()).isEqualTo(700);
        assertThat(forgiving.mainCostUnits()).isZero();
        assertThat(forgiving.forgivenCostUnits()).isZero();
    }

    @Test
    void overlappingAdvances_whileWhatIsOutstandingIsLessThanTheAskingRequestsCost_repaidFirstTogether() {
        // C = 1,000, r = 0.2: a boundary repays up to 800.
        DualTokenPool p = pool();
        p.allowOverlappingAdvances();
        p.advance(1_400); // for a request of 1,500 that drew 100
        assertThat(p.mayAdvance(1_500)).as("1,400 outstanding < 1,500").isTrue();
        assertThat(p.mayAdvance(1_400))
                .as("1,400 outstanding, not less than 1,400")
                .isFalse();
        p.advance(1_450); // the second, of 1,500, drew 50
        assertThat(p.advanceOutstandingCostUnits())
                .as("less than twice the larger cost")
                .isEqualTo(2_850)
                .isLessThan(2 * 1_500);
        assertThat(p.debtCostUnits()).isEqualTo(2_850);
        assertThat(p.mayAdvance(1_500)).isFalse();
        // Boundaries repay 800 each, the advances first: 2,050, then 1,250 < 1,500.
        p.replenish(0.2);
        assertThat(p.advanceOutstandingCostUnits()).isEqualTo(2_050);
        assertThat(p.mayAdvance(1_500)).isFalse();
        p.replenish(0.2);
        assertThat(p.advanceOutstandingCostUnits()).isEqualTo(1_250);
        assertThat(p.mainCostUnits()).isZero();
        assertThat(p.mayAdvance(1_500)).isTrue();
        assertThat(p.advancedCostUnits()).isEqualTo(2_850);
        assertThat(p.repaidCostUnits()).isEqualTo(1_600);
    }

    @Test
    void replenish_restoresReserveThenRepaysDebtThenFillsMain() {
        // Borrow 1,500 beyond the pools: debt 1,500 (the window allows up to 1,600 here).
        DualTokenPool p = pool();
        assertThat(p.openBorrowWindow(1_600)).isEqualTo(1_600);
        assertThat(p.tryDraw(2_300, false)).isTrue(); // 800 from main, 1,500 borrowed
        assertThat(p.debtCostUnits()).isEqualTo(1_500);
        assertThat(p.reserveCostUnits())
                .as("a hot borrower never touches the reserve")
                .isEqualTo(200);
        assertThat(p.tryDraw(150, true)).isTrue(); // steady: reserve before borrowing
        assertThat(p.reserveCostUnits()).isEqualTo(50);
        assertThat(p.debtCostUnits()).isEqualTo(1_500);

        // Boundary 1: reserve back to 200 first; then C − 200 = 800 repays debt; main gets 0.
        p.replenish(0.2);
        assertThat(p.reserveCostUnits()).isEqualTo(200);
        assertThat(p.repaidThisIntervalCostUnits()).isEqualTo(800);
        assertThat(p.debtCostUnits()).isEqualTo(700);
        assertThat(p.mainCostUnits()).isZero();
        // Boundary 2: reserve 200, repay the last 700, main the remaining 100.
        p.replenish(0.2);
        assertThat(p.reserveCostUnits()).isEqualTo(200);
        assertThat(p.repaidThisIntervalCostUnits()).isEqualTo(700);
        assertThat(p.debtCostUnits()).isZero();
        assertThat(p.mainCostUnits()).isEqualTo(100);
        // Boundary 3: no debt, the full split again.
        p.replenish(0.2);
        assertThat(p.mainCostUnits()).isEqualTo(800);
        assertThat(p.repaidCostUnits()).isEqualTo(1_500);
    }

    @Test
    void replenish_unusedTokensExpire_supplyPerIntervalIsC() {
        // An idle interval's tokens are not banked: after two idle boundaries the pools hold C again,
        // not 2C or C + rC.
        DualTokenPool p = pool();
        p.replenish(0.2);
        p.replenish(0.2);
        assertThat(p.mainCostUnits() + p.reserveCostUnits()).isEqualTo(1_000);
        // A new r applies at the boundary.
        p.replenish(0.5);
        assertThat(p.reserveCostUnits()).isEqualTo(500);
        assertThat(p.mainCostUnits()).isEqualTo(500);
    }

    @Test
    void borrow_onlyInTheFirstIntervalOfABurst_andAtMostH() {
        DualTokenPool p = pool();
        p.openBorrowWindow(300);
        // 800 main + at most 300 borrowed: a hot 1,200 does not fit, a hot 1,000 does.
        assertThat(p.tryDraw(1_200, false)).isFalse();
        assertThat(p.tryDraw(1_000, false)).isTrue();
        assertThat(p.borrowedThisIntervalCostUnits()).isEqualTo(200);
        assertThat(p.tryDraw(101, false)).as("only 100 of H left").isFalse();
        assertThat(p.tryDraw(100, false)).isTrue();
        assertThat(p.borrowedCostUnits()).isEqualTo(300);

        // The burst goes on into the next interval (it was in deficit): no new window, even once the
        // debt (300 ≤ 800) is repaid at the boundary.
        p.replenish(0.2);
        assertThat(p.debtCostUnits()).isZero();
        assertThat(p.mayOpenBorrowWindow()).isFalse();
        assertThat(p.openBorrowWindow(300)).isZero();
        // Main is 800 − 300 repaid = 500, and nothing may be borrowed beyond it.
        assertThat(p.mainCostUnits()).isEqualTo(500);
        assertThat(p.tryDraw(501, false)).isFalse();
        assertThat(p.tryDraw(500, false)).isTrue();
        // An interval without deficit ends the burst; the one after may borrow again.
        p.replenish(0.2);
        assertThat(p.mayOpenBorrowWindow())
                .as("previous interval was in deficit")
                .isFalse();
        p.replenish(0.2);
        assertThat(p.mayOpenBorrowWindow()).isTrue();
        assertThat(p.burstsBorrowing()).isEqualTo(1);
    }

    @Test
    void borrow_withDebtOutstanding_notAllowed() {
        // Borrow 2,000: repaid 800 per boundary (C − reserve), so 1,200 and then 400 remain. The
        // second interval had no deficit, yet no window opens while 400 are owed: debt never exceeds
        // one H.
        DualTokenPool p = pool();
        p.openBorrowWindow(2_000);
        assertThat(p.tryDraw(2_800, false)).isTrue();
        p.replenish(0.2);
        assertThat(p.debtCostUnits()).isEqualTo(1_200);
        p.replenish(0.2);
        assertThat(p.debtCostUnits()).isEqualTo(400);
        assertThat(p.deficit()).isFalse();
        assertThat(p.mayOpenBorrowWindow()).isFalse();
        p.replenish(0.2);
        assertThat(p.debtCostUnits()).isZero();
        assertThat(p.mainCostUnits()).isEqualTo(400);
        assertThat(p.mayOpenBorrowWindow()).isTrue();
    }

    @Test
    void noRepayAblation_borrowedCostIsForgiven() {
        DualTokenPool p = new DualTokenPool(1_000, 0.2, false);
        p.openBorrowWindow(300);
        assertThat(p.tryDraw(1_100, false)).isTrue();
        assertThat(p.debtCostUnits()).isZero();
        assertThat(p.forgivenCostUnits()).isEqualTo(300);
        p.replenish(0.2);
        assertThat(p.mainCostUnits()).isEqualTo(800);
    }

    @Test
    void fullReserve_noMainPool_hotNeverDrawsAndDebtStays() {
        // r = 1 is allowed and means what it says; documented on AdmissionConfig.
        DualTokenPool p = new DualTokenPool(1_000, 1.0, true);
        assertThat(p.mainCostUnits()).isZero();
        assertThat(p.tryDraw(1, false)).isFalse();
        assertThat(p.tryDraw(1_000, true)).isTrue();
    }

    @Test
    void lendReserve_keepsExactlyTheCeilingOfTheReserveTimesTheTimeLeft() {
        // C = 125, r = 0.2: a reserve of 25. At 720 ns of a 1,000 ns interval 280 ns are left, and
        // steady requests may still need ceil(25 × 280 ÷ 1,000) = ceil(7.0) = 7: 18 are lent. (In
        // doubles, 25 × (280 ÷ 1,000.0) is 7.000000000000001, whose ceiling would keep 8.)
        DualTokenPool p = new DualTokenPool(125, 0.2, true);
        assertThat(p.lendReserve(720, 1_000)).isEqualTo(18);
        // Every reserve and elapsed time on a grid: lent = reserve − ceil(reserve × left ÷ Δ), exactly.
        for (long budget = 1; budget <= 400; budget++) {
            for (long elapsed = 0; elapsed <= 1_000; elapsed++) {
                DualTokenPool q = new DualTokenPool(budget, 1.0, true);
                assertThat(q.lendReserve(elapsed, 1_000))
                        .as("C %d, elapsed %d of 1,000 ns", budget, elapsed)
                        .isEqualTo(budget - Math.ceilDiv(budget * (1_000 - elapsed), 1_000));
            }
        }
        // Products beyond a long: a reserve of 2^50 and Δ of 60 s.
        DualTokenPool big = new DualTokenPool(1L << 50, 1.0, true);
        long delta = 60_000_000_000L;
        long keep = java.math.BigInteger.valueOf(1L << 50)
                .multiply(java.math.BigInteger.valueOf(delta - 7))
                .add(java.math.BigInteger.valueOf(delta - 1))
                .divide(java.math.BigInteger.valueOf(delta))
                .longValueExact();
        assertThat(big.lendReserve(7, delta)).isEqualTo((1L << 50) - keep);
    }

    /**
     * Random operation sequences against the pool's own accounting, recomputed here: every boundary
     * restores the reserve to floor(r·C) before anything else, repays min(debt, C − reserve), and
     * gives the rest to main; pools and debt never go negative; what is drawn never exceeds
     * C × intervals + the windows opened; borrowing happens only in an opened window, by at most its
     * size, and a window opens only after an interval without deficit and with no debt.
     */
    @Test
    void randomOperations_accountingInvariantsHold() {
        qt().withExamples(500)
                .forAll(integers().between(1, 5_000), lists().of(operations()).ofSizeBetween(1, 300))
                .checkAssert((budget, ops) -> run(budget, ops));
    }

    private static void run(long budget, List<int[]> ops) {
        DualTokenPool p = new DualTokenPool(budget, 0.2, true);
        long drawn = 0;
        long windows = 0;
        long window = 0;
        long borrowedInInterval = 0;
        boolean previousDeficit = false;
        boolean deficit = false;
        for (int[] op : ops) {
            switch (op[0]) {
                case 0, 1 -> {
                    boolean steady = op[0] == 0;
                    long before = p.available(steady);
                    long borrowedBefore = p.borrowedCostUnits();
                    if (p.tryDraw(op[1], steady)) {
                        drawn += op[1];
                        borrowedInInterval += p.borrowedCostUnits() - borrowedBefore;
                    }
                    if (op[1] > before) {
                        deficit = true;
                    }
                }
                case 2 -> drawn += p.drawUpTo(op[1], op[1] % 2 == 0);
                case 3 -> {
                    double r = op[1] / 1000.0;
                    long debt = p.debtCostUnits();
                    p.replenish(r);
                    long reserve = (long) Math.floor(r * budget);
                    long repaid = Math.min(debt, budget - reserve);
                    assertThat(p.reserveCostUnits())
                            .as("reserve restored first")
                            .isEqualTo(reserve);
                    assertThat(p.repaidThisIntervalCostUnits())
                            .as("then debt repaid")
                            .isEqualTo(repaid);
                    assertThat(p.mainCostUnits()).as("then main gets the rest").isEqualTo(budget - reserve - repaid);
                    previousDeficit = deficit;
                    deficit = false;
                    window = 0;
                    borrowedInInterval = 0;
                }
                case 4 -> {
                    boolean mayOpen = !previousDeficit && !deficit && p.debtCostUnits() == 0;
                    long opened = p.openBorrowWindow(op[1]);
                    assertThat(opened).isEqualTo(mayOpen ? op[1] : 0);
                    window += opened;
                    windows += opened;
                }
                default -> {
                    p.markDeficit();
                    deficit = true;
                }
            }
            assertThat(p.mainCostUnits()).isNotNegative();
            assertThat(p.reserveCostUnits()).isNotNegative();
            assertThat(p.debtCostUnits()).isNotNegative();
            assertThat(p.borrowAllowanceCostUnits()).isNotNegative();
            assertThat(borrowedInInterval).as("borrowed in this interval").isLessThanOrEqualTo(window);
            assertThat(drawn).as("drawn so far").isLessThanOrEqualTo(budget * p.intervalsBegun() + windows);
            assertThat(p.drawnMainCostUnits() + p.drawnReserveCostUnits() + p.borrowedCostUnits())
                    .isEqualTo(drawn);
        }
    }

    /**
     * {kind, amount}: 0 steady draw, 1 hot draw, 2 partial draw, 3 boundary with r = amount / 1000,
     * 4 borrow window, 5 deficit.
     */
    private static Gen<int[]> operations() {
        return integers()
                .between(0, 5)
                .zip(integers().between(0, 6_000), (kind, amount) ->
                        new int[] {kind, kind == 3 ? amount % 1_001 : Math.max(kind == 4 ? 0 : 1, amount)})
                .describedAs(op -> "op " + op[0] + "(" + op[1] + ")");
    }
}

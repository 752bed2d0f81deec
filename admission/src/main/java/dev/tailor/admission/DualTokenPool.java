package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.math.BigInteger;

/**
 * The per-proxy dual token pool (docs/design.md#dual-token-pool): each interval's budget {@code C}
 * (cost units) is split into a main pool and a reserved allowance {@code r·C} that only steady
 * segments may draw, and only once the main pool is empty (with lending, the part of it steady
 * segments can no longer need in the running interval is lent to hot ones); in the first interval of a burst, and
 * only then, up to the measured headroom {@code H} may be borrowed beyond {@code C}, which becomes
 * debt. Replenishment at each interval boundary restores the reserve first, then repays debt, then
 * gives the remainder to the main pool.
 *
 * <p>Contract. Pool levels and debt are whole cost units and never negative. Within an interval
 * the pools only shrink. At a boundary: {@code reserve = floor(r·C)}, {@code repaid = min(debt,
 * C − reserve)}, {@code main = C − reserve − repaid}; so an interval's regular supply is exactly
 * {@code C − repaid}. Borrowing is possible only in an interval whose {@linkplain #openBorrowWindow
 * borrow window} the controller opened, and the total borrowed in it is at most the headroom given.
 * Hence over any run, cost drawn ≤ C × intervals begun + Σ headroom of the intervals that borrowed.
 * An {@linkplain #advance advance} (ours, {@link AdmissionConfig#oversizeAdvance}) admits the rest of
 * one request costing more than C as debt, with or without repayment, and only while no advance is
 * outstanding, or, with {@linkplain #allowOverlappingAdvances overlapping advances}, while the advances
 * outstanding are less than the cost of the request asking ({@link #mayAdvance}); repayment goes to the
 * advances first. Each advance is smaller than the cost of the request it admitted, so what is outstanding
 * stays below one request's cost (single) or twice the largest request's cost (overlapping), and over any
 * run, cost admitted from the pools, by borrowing and by advances ≤ C × intervals begun + Σ headroom of
 * the intervals that borrowed + the advances outstanding (everything advanced before was repaid out of
 * some interval's C).
 * A hot request draws the reserve only up to what is {@linkplain #lendReserve lent}, and what is lent
 * is at most the reserve minus {@code ceil(r·C × time left in the interval ÷ Δ)}, so lending never
 * creates tokens: it moves them between classes within the interval.
 * Not thread-safe: the {@link AdmissionController} serialises access.
 */
/*
 * Maintainer note.
 *
 * One interval's budget, not a bucket (our reading). The design makes the remainder after the reserve
 * and the repayment the main pool. We read that literally: tokens left over at the
 * end of an interval expire, in both pools, because the backend cannot bank the capacity of an idle
 * interval; burst absorption is the borrow's job, and it is bounded by measured headroom. "Restore
 * the reserve first" then means the reserve is refilled to r·C before anything else, whatever was
 * drawn from it, and the unused part is not added again. (Carrying the unused reserve over and
 * charging only the refill would let an interval supply C + r·C.)
 *
 * Draw order. A steady request takes the main pool first, then the reserve, then (in a burst
 * window) the borrow allowance; a hot one takes main, then what is lent of the reserve, then borrow.
 * Taking the reserve before borrowing keeps debt, which shrinks later intervals' main pools, for
 * demand the budget cannot meet.
 *
 * Bursts. The controller marks an interval as in deficit when a request could not be covered by the
 * pools its class may draw (whether it then borrowed, waited or was refused), or when requests were
 * still waiting after the boundary's queue service. A burst is a run of deficit intervals; its first
 * interval is the one after an interval without deficit, with no debt outstanding and nothing
 * waiting (our reading of "the first interval of a burst"): only then does the controller open the
 * borrow window, so a second burst cannot borrow until the first has been repaid and borrowed debt
 * never exceeds one headroom. Without repayment (the no-repay ablation) borrowed cost is forgiven: it is
 * counted but never becomes debt.
 *
 * Lending (our reading; the paper is silent). Read strictly, the reserve expires unused whenever
 * steady demand is below r·C while hot requests wait, and that capacity is lost: on the deployed-like
 * scenario 14 % of the backend sat idle while requests waited. The reserve exists so that steady
 * requests arriving later in the interval still find tokens; what they can still need falls as the
 * interval runs out. With steady arrivals spread over the interval at up to r·C per interval, keeping
 * ceil(r·C × time left ÷ Δ) covers them, and the rest can go to hot requests without taking anything
 * from steady ones. The controller recomputes the lendable part whenever it is called inside an
 * interval (a proxy calls it every millisecond), so the reserve is released in steps, not at once.
 *
 * Advances (ours; the paper is silent). A request costing more than C could not be admitted before it
 * had collected its whole cost from ⌈cost ÷ C⌉ intervals' pools or more, and on a backend shared by
 * many proxies (C·Δ ÷ proxies each) that held 1 MiB reads three intervals while the backend idled. An
 * advance lets such a request through on its turn and makes the next intervals pay for it, as a rate
 * limiter that lets an expensive permit through and makes the next callers wait for it (Guava's
 * RateLimiter), and as the baseline guarantee's full bucket covers one request larger than its depth.
 * It is debt even without repayment (the no-repay ablation forgives borrowed headroom, which is bounded
 * per burst; forgiving advances would let one through every interval). One outstanding at a time keeps
 * the overshoot to one request; repaying the advance first, before borrowed or overdrawn debt, lets the
 * next oversized request through as soon as the budget has paid for the last one. Borrow windows
 * still need all debt repaid, advances included.
 *
 * Overlapping advances (ours, AdmissionConfig.overlappingAdvances, an option, off). With one at a time, a
 * second oversized request arriving while the first's advance is repaid waits for all of it: on a
 * backend shared by 32 proxies a 1 MiB read costs four budgets, its advance takes four boundaries or
 * more to repay (from C − R each), and that wait was what remained of the slowest reads' latency above fifo's
 * (docs/admission-record.md has the figures). A new advance is allowed while what is outstanding is less than
 * the asking request's cost: outstanding < cost before, lacking < cost added, so < 2 × the largest cost
 * after, and repayment only lowers it. A deeper allowance (one classifier window of budget, W × C) was
 * measured too and did little more, for a constant W × C instead of one request's cost. It stays off
 * because where the oversized requests are a bursty tenant's, admitting more of them sooner lengthens
 * the steady tenants' tail (docs/admission-record.md, Overlapping advances). Credit-gated advances (ours,
 * AdmissionConfig.creditGatedAdvances, an option, off) keep the overlap for requests whose disk was within
 * its credits at arrival: the controller tells the pool per request (mayAdvance's mayOverlap).
 *
 * r = 1 leaves no main pool and nothing to repay debt from: hot segments then wait until they calm
 * down, and a debt, once taken, stays (once advances are outstanding, oversized requests collect their
 * cost again).
 * That is what the configuration asks for; the controller documents it.
 */
final class DualTokenPool {

    private final long budgetCostUnits;
    private final boolean repayment;
    private long main;
    private long reserve;
    /** The reserve at the start of the running interval, {@code floor(r·C)}. */
    private long reserveAtStart;
    /** The part of {@link #reserve} hot requests may draw now, {@code <= reserve}. */
    private long lent;

    private long debt;
    /** The part of {@link #debt} that is advances not yet repaid. */
    private long advanceOutstanding;
    /** Overlapping advances: a new one while what is outstanding is less than the asking request's cost. */
    private boolean overlappingAdvances;

    private long borrowAllowance;
    private boolean deficit;
    private boolean previousDeficit;
    /** Paced release: the main pool at the start of the running interval. */
    private long mainAtStart;
    /** Paced release: what hot requests may have drawn from main so far in this interval. */
    private long pacedAllowance = Long.MAX_VALUE;
    /** What hot requests drew from main in this interval. */
    private long hotDrawnMain;

    private boolean pacing;
    private long overdrawnCostUnits;
    private long overdrawnThisInterval;

    // This interval.
    private long repaidThisInterval;
    private long borrowedThisInterval;
    private long openedWindowCostUnits;
    // Cumulative (saturating).
    private long intervalsBegun = 1;
    private long drawnMainCostUnits;
    private long drawnReserveCostUnits;
    private long lentCostUnits;
    private long borrowedCostUnits;
    private long forgivenCostUnits;
    private long repaidCostUnits;
    private long advancedCostUnits;
    private long burstsBorrowing;
    /** Spare granted in the running interval ({@link #grantSpare}); counted as drawn first. */
    private long spareThisInterval;
    /** The regular budget (main and reserve, grants excluded) that expired unused at the last boundary. */
    private long expiredAtLastBoundary;

    /**
     * A pool at the start of its first interval: reserve {@code floor(r·C)}, main the rest, no debt.
     *
     * @param budgetCostUnits C, cost units per interval, {@code >= 1}
     * @param reserveFraction r, in [0, 1]
     * @param repayment       whether borrowed cost becomes debt (false: the no-repay ablation)
     */
    DualTokenPool(long budgetCostUnits, double reserveFraction, boolean repayment) {
        Checks.requireRange("budgetCostUnits", budgetCostUnits, 1, AdmissionConfig.MAX_BUDGET_COST_UNITS);
        this.budgetCostUnits = budgetCostUnits;
        this.repayment = repayment;
        this.reserve = reserveTarget(reserveFraction);
        this.reserveAtStart = reserve;
        this.main = budgetCostUnits - reserve;
        this.mainAtStart = main;
    }

    /**
     * Paced release (ours): from now on hot requests draw the main pool in
     * {@link AdmissionConfig#PACING_SLICES} equal steps over each interval ({@link #pace}); steady
     * requests are not paced.
     */
    void enablePacing() {
        pacing = true;
        pacedAllowance = Math.ceilDiv(mainAtStart, AdmissionConfig.PACING_SLICES);
    }

    /**
     * Releases to hot requests the share of the interval's main pool that is due {@code elapsedNanos}
     * into it: {@code ceil(main at start × k ÷ slices)} with {@code k = floor(elapsed × slices ÷ Δ) + 1}
     * (at most all of it). Never takes back what was released.
     */
    void pace(long elapsedNanos, long intervalNanos) {
        if (!pacing) {
            return;
        }
        int slices = AdmissionConfig.PACING_SLICES;
        long k = Math.min(slices, Math.max(0, elapsedNanos) / Math.max(1, intervalNanos / slices) + 1);
        pacedAllowance = Math.max(pacedAllowance, ceilTimesFraction(mainAtStart, k, slices));
    }

    /** What hot requests may still draw from main now. */
    private long hotMain() {
        return Math.min(main, Math.max(0, pacedAllowance - hotDrawnMain));
    }

    /**
     * Draws {@code costUnits} for a request within its disk's baseline, whatever the pools hold: main,
     * then the reserve, and what they lack becomes debt (with repayment; else it is forgiven), which
     * later main pools repay first. Never refuses.
     */
    void drawGuaranteed(long costUnits) {
        long regular = Math.min(costUnits, main + reserve);
        takeRegular(regular, true);
        long over = costUnits - regular;
        if (over > 0) {
            deficit = true;
            overdrawnCostUnits = Checks.saturatedAdd(overdrawnCostUnits, over);
            overdrawnThisInterval = Checks.saturatedAdd(overdrawnThisInterval, over);
            if (repayment) {
                debt = Checks.saturatedAdd(debt, over);
            } else {
                forgivenCostUnits = Checks.saturatedAdd(forgivenCostUnits, over);
            }
        }
    }

    /**
     * The most a request within its baseline may still be admitted beyond the pools in this interval
     * with a bounded overdraft: what keeps the debt within what the next boundary repays, C − R (less
     * what was forgiven this interval when repayment is off).
     */
    long overdraftRoomCostUnits() {
        long owed = repayment ? debt : overdrawnThisInterval;
        return Math.max(0, budgetCostUnits - reserveAtStart - owed);
    }

    /** Cost admitted beyond the pools for requests within their baseline (cumulative). */
    long overdrawnCostUnits() {
        return overdrawnCostUnits;
    }

    /** C, cost units per interval. */
    long budgetCostUnits() {
        return budgetCostUnits;
    }

    /** What a request of the given class can draw without borrowing. */
    long available(boolean steady) {
        return steady ? main + reserve : hotMain() + lent;
    }

    /**
     * Draws {@code costUnits} whole, or nothing: from the main pool, then the reserve (hot: its lent part),
     * then the borrow allowance if a burst window is open. Marks the interval in deficit when the
     * regular pools did not suffice.
     *
     * @return whether the cost was drawn
     */
    boolean tryDraw(long costUnits, boolean steady) {
        long regular = available(steady);
        if (costUnits <= regular) {
            takeRegular(costUnits, steady);
            return true;
        }
        if (!steady && costUnits <= main + lent) {
            return false; // the pools hold it, pacing holds it back: not a deficit, nothing to borrow
        }
        deficit = true;
        if (costUnits - regular > borrowAllowance) {
            return false;
        }
        long borrowed = costUnits - regular;
        takeRegular(regular, steady);
        borrowAllowance -= borrowed;
        if (borrowedThisInterval == 0) {
            burstsBorrowing++;
        }
        borrowedThisInterval += borrowed;
        borrowedCostUnits = Checks.saturatedAdd(borrowedCostUnits, borrowed);
        if (repayment) {
            debt += borrowed;
        } else {
            forgivenCostUnits = Checks.saturatedAdd(forgivenCostUnits, borrowed);
        }
        return true;
    }

    /**
     * Draws up to {@code maxCostUnits} from the regular pools (no borrowing): main first, then the
     * reserve (hot: only its lent part).
     *
     * @return the cost units drawn, {@code 0 .. maxCostUnits}
     */
    long drawUpTo(long maxCostUnits, boolean steady) {
        long drawn = Math.min(maxCostUnits, available(steady));
        takeRegular(drawn, steady);
        return drawn;
    }

    private void takeRegular(long costUnits, boolean steady) {
        long fromMain = Math.min(costUnits, steady ? main : hotMain());
        main -= fromMain;
        if (!steady) {
            hotDrawnMain += fromMain;
        }
        drawnMainCostUnits = Checks.saturatedAdd(drawnMainCostUnits, fromMain);
        long fromReserve = costUnits - fromMain;
        if (fromReserve > 0) {
            assert fromReserve <= (steady ? reserve : lent);
            reserve -= fromReserve;
            if (steady) {
                drawnReserveCostUnits = Checks.saturatedAdd(drawnReserveCostUnits, fromReserve);
                lent = Math.min(lent, reserve);
            } else {
                lent -= fromReserve;
                lentCostUnits = Checks.saturatedAdd(lentCostUnits, fromReserve);
            }
        }
    }

    /**
     * Overlapping advances (ours, {@link AdmissionConfig#overlappingAdvances}): from now on {@link #mayAdvance}
     * allows a new advance while the advances outstanding are less than the asking request's cost.
     */
    void allowOverlappingAdvances() {
        overlappingAdvances = true;
    }

    /**
     * Whether an {@link #advance} may be made now for a request costing {@code requestCostUnits}: no earlier
     * advance is outstanding (not fully repaid), or, with overlapping advances, what is outstanding is less
     * than that cost.
     */
    boolean mayAdvance(long requestCostUnits) {
        return mayAdvance(requestCostUnits, true);
    }

    /**
     * As {@link #mayAdvance(long)}, for a request that may take an overlapping advance only when
     * {@code mayOverlap} (credit-gated advances, ours, {@link AdmissionConfig#creditGatedAdvances}: its disk
     * was within its credits when it arrived); otherwise only when no advance is outstanding.
     */
    boolean mayAdvance(long requestCostUnits, boolean mayOverlap) {
        return advanceOutstanding == 0 || (overlappingAdvances && mayOverlap && advanceOutstanding < requestCostUnits);
    }

    /**
     * Admits {@code costUnits} beyond the pools for a request costing more than C that has drawn what the
     * pools gave it (ours, {@link AdmissionConfig#oversizeAdvance}): they become debt, with or without
     * repayment, which the next boundaries repay first. Only when {@link #mayAdvance} for that request.
     * Marks the interval in deficit.
     *
     * @param costUnits what the request still lacks, {@code >= 0}
     */
    void advance(long costUnits) {
        assert costUnits >= 0 && (advanceOutstanding == 0 || overlappingAdvances);
        deficit = true;
        debt = Checks.saturatedAdd(debt, costUnits);
        advanceOutstanding = Checks.saturatedAdd(advanceOutstanding, costUnits);
        advancedCostUnits = Checks.saturatedAdd(advancedCostUnits, costUnits);
    }

    /** Cost admitted beyond the pools by advances (cumulative). */
    long advancedCostUnits() {
        return advancedCostUnits;
    }

    /** The advances not yet repaid, 0 when none. */
    long advanceOutstandingCostUnits() {
        return advanceOutstanding;
    }

    /** Marks the running interval as part of a burst: demand it could not meet. */
    void markDeficit() {
        deficit = true;
    }

    /**
     * Begins the next interval: reserve back to {@code floor(r·C)}, debt repaid from what is left,
     * the remainder becomes the main pool; unused tokens and the borrow allowance expire.
     *
     * @param reserveFraction r for this interval, in [0, 1]
     */
    void replenish(double reserveFraction) {
        // What the running interval left of its regular budget; a grant counts as drawn first, so what
        // expires of a grant is never passed on again.
        expiredAtLastBoundary = Math.max(0, Checks.saturatedAdd(main, reserve) - spareThisInterval);
        spareThisInterval = 0;
        reserve = reserveTarget(reserveFraction);
        reserveAtStart = reserve;
        lent = 0;
        long repaid = Math.min(debt, budgetCostUnits - reserve);
        debt -= repaid;
        advanceOutstanding -= Math.min(advanceOutstanding, repaid);
        main = budgetCostUnits - reserve - repaid;
        mainAtStart = main;
        hotDrawnMain = 0;
        pacedAllowance = pacing ? Math.ceilDiv(main, AdmissionConfig.PACING_SLICES) : Long.MAX_VALUE;
        borrowAllowance = 0;
        previousDeficit = deficit;
        deficit = false;
        repaidThisInterval = repaid;
        overdrawnThisInterval = 0;
        borrowedThisInterval = 0;
        openedWindowCostUnits = 0;
        repaidCostUnits = Checks.saturatedAdd(repaidCostUnits, repaid);
        intervalsBegun = Checks.saturatedAdd(intervalsBegun, 1);
    }

    /**
     * Adds {@code costUnits} to the running interval's main pool: capacity another proxy of the same
     * backend left unused (spare exchange). It expires with the interval, is never debt, and is not
     * counted in what expires unused at the next boundary.
     */
    void grantSpare(long costUnits) {
        main = Checks.saturatedAdd(main, costUnits);
        mainAtStart = Checks.saturatedAdd(mainAtStart, costUnits);
        spareThisInterval = Checks.saturatedAdd(spareThisInterval, costUnits);
    }

    /** The regular budget (main and reserve, grants excluded) that expired unused at the last boundary. */
    long expiredAtLastBoundary() {
        return expiredAtLastBoundary;
    }

    /**
     * Lends hot requests the part of the reserve that steady ones can no longer need in the running
     * interval: everything above {@code ceil(floor(r·C) × (Δ − elapsed) ÷ Δ)}. What is lent stays lent
     * until drawn or until the interval ends; calling again later lends more, never less.
     *
     * @param elapsedNanos  time since the running interval began, {@code 0 .. intervalNanos}
     * @param intervalNanos Δ
     * @return the part of the reserve lent now
     */
    long lendReserve(long elapsedNanos, long intervalNanos) {
        long left = Math.max(0, intervalNanos - Math.max(0, elapsedNanos));
        lent = Math.max(lent, Math.max(0, reserve - ceilTimesFraction(reserveAtStart, left, intervalNanos)));
        return lent;
    }

    /**
     * {@code ceil(value × numerator ÷ denominator)}, exactly, for {@code 0 <= numerator <= denominator}.
     * In doubles the product can land one ulp above a whole number and keep a token too many
     * (25 × (280 ÷ 1000.0) is 7.000000000000001); the product in a long overflows only for reserves and
     * intervals far beyond the usual (2⁵⁰ cost units × 60 s), and then takes the BigInteger path.
     */
    static long ceilTimesFraction(long value, long numerator, long denominator) {
        long high = Math.multiplyHigh(value, numerator);
        long product = value * numerator;
        if (high == 0 && product >= 0) {
            return Math.ceilDiv(product, denominator);
        }
        BigInteger d = BigInteger.valueOf(denominator);
        return BigInteger.valueOf(value)
                .multiply(BigInteger.valueOf(numerator))
                .add(d.subtract(BigInteger.ONE))
                .divide(d)
                .longValueExact();
    }

    /**
     * Counts {@code intervals} idle intervals begun and ended without any change of state (no debt,
     * no deficit): the state after them is that after one {@link #replenish}.
     */
    void skipIdleIntervals(long intervals) {
        intervalsBegun = Checks.saturatedAdd(intervalsBegun, intervals);
    }

    /**
     * Whether the running interval may borrow if demand exceeds the pools: neither the previous nor
     * the running interval is in deficit (the controller marks the running one when requests still
     * wait after the boundary's queue service), and there is no debt.
     */
    boolean mayOpenBorrowWindow() {
        return !previousDeficit && !deficit && debt == 0;
    }

    /**
     * Allows borrowing up to {@code headroomCostUnits} in the running interval, if
     * {@link #mayOpenBorrowWindow()}; otherwise does nothing.
     *
     * @return the allowance opened, 0 when none
     */
    long openBorrowWindow(long headroomCostUnits) {
        if (headroomCostUnits <= 0 || !mayOpenBorrowWindow()) {
            return 0;
        }
        borrowAllowance = headroomCostUnits;
        openedWindowCostUnits = headroomCostUnits;
        return headroomCostUnits;
    }

    long mainCostUnits() {
        return main;
    }

    /** The reserve the running interval started with. */
    long reserveAtStartCostUnits() {
        return reserveAtStart;
    }

    long reserveCostUnits() {
        return reserve;
    }

    long debtCostUnits() {
        return debt;
    }

    long borrowAllowanceCostUnits() {
        return borrowAllowance;
    }

    boolean deficit() {
        return deficit;
    }

    long repaidThisIntervalCostUnits() {
        return repaidThisInterval;
    }

    long borrowedThisIntervalCostUnits() {
        return borrowedThisInterval;
    }

    /** The borrow allowance opened for the running interval (0 when none), before any was drawn. */
    long openedWindowCostUnits() {
        return openedWindowCostUnits;
    }

    /** Intervals begun, the first one included: the budget issued so far is C times this. */
    long intervalsBegun() {
        return intervalsBegun;
    }

    long drawnMainCostUnits() {
        return drawnMainCostUnits;
    }

    long drawnReserveCostUnits() {
        return drawnReserveCostUnits;
    }

    /** Cost hot requests drew from the lent part of the reserve. */
    long lentCostUnits() {
        return lentCostUnits;
    }

    /** The part of the reserve hot requests may draw now. */
    long lentNowCostUnits() {
        return lent;
    }

    long borrowedCostUnits() {
        return borrowedCostUnits;
    }

    long forgivenCostUnits() {
        return forgivenCostUnits;
    }

    long repaidCostUnits() {
        return repaidCostUnits;
    }

    /** Intervals in which something was borrowed. */
    long burstsBorrowing() {
        return burstsBorrowing;
    }

    private long reserveTarget(double reserveFraction) {
        Checks.requireRange("reserveFraction", reserveFraction, 0, 1);
        return Math.min(budgetCostUnits, (long) Math.floor(reserveFraction * budgetCostUnits));
    }
}

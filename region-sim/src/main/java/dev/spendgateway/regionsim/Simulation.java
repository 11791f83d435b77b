package dev.spendgateway.regionsim;

import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.money.Micros;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * One policy on one scenario, in simulated time: a single queue of timed steps, taken in (time,
 * order of scheduling) order, so a run is a function of its seed. Regions are {@link RegionLedger}s
 * (the real decider and fold); the rest — links, partitions, crashes, rebalancers, the gateway's
 * retried closes — is modelled here. After every write the books of all regions are checked against
 * the company-wide caps.
 */
final class Simulation {
  private static final long GOSSIP_EVERY = 60_000;
  private static final long PUSH_EVERY = 30_000;
  private static final long EXPIRE_EVERY = 30_000;
  private static final long RESEND_EVERY = 1_000;
  private static final long ASK_COOLDOWN = 2_000;
  private static final long VIEW_MAX_AGE = 150_000;

  private final Scenario sc;
  private final SimConfig cfg;
  private final Policy policy;
  private final boolean tracing;
  private final SplittableRandom net;
  private final Split split;
  private final RegionLedger[] ledgers;
  private final Memory[] memory;
  private final List<List<Scenario.Call>> closesWhileDown = new ArrayList<>();
  private final PriorityQueue<Scheduled> queue =
      new PriorityQueue<>(
          Comparator.comparingLong(Scheduled::at).thenComparingLong(Scheduled::seq));
  private final Set<CapKey> keys = new LinkedHashSet<>();
  private final Set<String> outIds = new HashSet<>();
  private final List<String> trace = new ArrayList<>();
  private final long span;
  private final long end;
  private long seq;
  private long now;

  private int admitted;
  private int refusedByCap;
  private int stranded;
  private int refusedDown;
  private int transfers;
  private long moved;
  private int crashes;
  private long overshoot;
  private String overshootViolation;
  private String invariantViolation;
  private String lastInvariant;
  private int peerHadRoom;

  private Simulation(Scenario sc, SimConfig cfg, Policy policy, boolean tracing) {
    this.sc = sc;
    this.cfg = cfg;
    this.policy = policy;
    this.tracing = tracing;
    this.net = new SplittableRandom(sc.seed() * 31 + policy.ordinal() + 1);
    int n = policy == Policy.GLOBAL ? 1 : sc.regions();
    this.split =
        new Split(
            cfg.dailyCapMicros(),
            cfg.monthlyCapMicros(),
            policy == Policy.GLOBAL ? List.of(1) : sc.splitWeights());
    LedgerSettings settings =
        new LedgerSettings(
            new CapLimits(0, 0, 0, 0, 0),
            Duration.ofSeconds(cfg.reservationTimeoutSeconds()),
            Duration.ofSeconds(1),
            1_000,
            Duration.ofDays(62),
            Duration.ofHours(1),
            Duration.ofSeconds(5),
            100,
            false,
            1_000_000_000L);
    this.ledgers = new RegionLedger[n];
    this.memory = new Memory[n];
    for (int r = 0; r < n; r++) {
      ledgers[r] = new RegionLedger(r, split, settings);
      memory[r] = new Memory();
      closesWhileDown.add(new ArrayList<>());
    }
    this.span = cfg.hours() * 3_600_000L;
    this.end = span + cfg.drainMinutes() * 60_000L;
  }

  /** Runs {@code policy} on {@code sc}; with {@code tracing}, the result carries the trace. */
  static RunResult run(Scenario sc, SimConfig cfg, Policy policy, boolean tracing) {
    return new Simulation(sc, cfg, policy, tracing).run();
  }

  // ----------------------------------------------------------------------------------------------
  // Steps and messages
  // ----------------------------------------------------------------------------------------------

  private record Scheduled(long at, long seq, Step step) {}

  private sealed interface Step {}

  private record End(Scenario.Call call) implements Step {}

  private record CrashAt(int region, long downMillis) implements Step {}

  private record RecoverAt(int region) implements Step {}

  private record Deliver(int from, int to, Message message) implements Step {}

  private enum TickKind {
    EXPIRE,
    GOSSIP,
    PUSH,
    RESEND
  }

  /** A timer; a {@code RESEND} belongs to one incarnation's memory and dies with it. */
  private record Tick(int region, TickKind kind, Memory owner) implements Step {}

  private sealed interface Message {}

  /** Source to destination: apply this out as an in (once per id), then acknowledge. */
  private record Give(AllowanceOut out) implements Message {}

  private record Ack(String transferId) implements Message {}

  /** A region low on {@code key} asks for {@code wantMicros}. */
  private record Ask(CapKey key, long wantMicros) implements Message {}

  /** A region's headroom per current window, for the rebalancers' choices (never for spending). */
  private record Gossip(Map<CapKey, Long> headroom) implements Message {}

  /** The broken order: the borrower already added this; the lender is told to take it out. */
  private record Take(AllowanceOut out) implements Message {}

  private record Pending(int to, Message message) {}

  /** A region's process memory: everything here is lost when its ledger crashes. */
  private static final class Memory {
    final Map<String, Pending> unacked = new LinkedHashMap<>();
    boolean resendScheduled;
    final Map<Integer, Map<CapKey, Long>> view = new HashMap<>();
    final Map<Integer, Long> viewAt = new HashMap<>();
    final Map<CapKey, Long> lastAskAt = new HashMap<>();
    final Map<CapKey, long[]> lentThisMinute = new HashMap<>();
  }

  private void schedule(long at, Step step) {
    queue.add(new Scheduled(at, seq++, step));
  }

  private Instant at() {
    return cfg.start().plusMillis(now);
  }

  /** A line of the trace; built only when tracing (most runs never print one). */
  private void trace(java.util.function.Supplier<String> line) {
    if (tracing) {
      trace.add(String.format("%10.3fs %s", now / 1000.0, line.get()));
    }
  }

  private static String usd(long micros) {
    return "$" + Micros.toUsd(micros).toPlainString();
  }

  // ----------------------------------------------------------------------------------------------
  // The run
  // ----------------------------------------------------------------------------------------------

  private RunResult run() {
    for (int r = 0; r < ledgers.length; r++) {
      schedule(EXPIRE_EVERY, new Tick(r, TickKind.EXPIRE, null));
      if (policy == Policy.PUSH || policy == Policy.ADD_FIRST) {
        schedule(GOSSIP_EVERY + r * 97L, new Tick(r, TickKind.GOSSIP, memory[r]));
      }
      if (policy == Policy.PUSH) {
        schedule(PUSH_EVERY + r * 131L, new Tick(r, TickKind.PUSH, null));
      }
    }
    if (policy != Policy.GLOBAL) {
      for (Scenario.Crash c : sc.crashes()) {
        schedule(c.atMillis(), new CrashAt(c.region(), c.downMillis()));
      }
    }
    // Calls are merged in from their list as time reaches them (the queue stays small); a call
    // at the same millisecond as a queued step comes after it.
    List<Scenario.Call> calls = sc.calls();
    int nextCall = 0;
    while (overshootViolation == null) {
      Scheduled s = queue.peek();
      if (nextCall < calls.size() && (s == null || calls.get(nextCall).atMillis() < s.at())) {
        Scenario.Call c = calls.get(nextCall++);
        now = c.atMillis();
        arrive(c);
        continue;
      }
      if (s == null || s.at() > end) {
        break;
      }
      queue.poll();
      now = s.at();
      take(s.step());
    }
    if (overshootViolation == null && invariantViolation == null && policy != Policy.ADD_FIRST) {
      checkEveryOutLanded();
    }
    String violation = overshootViolation != null ? overshootViolation : invariantViolation;
    return new RunResult(
        sc.seed(),
        policy,
        sc.regions(),
        sc.calls().size(),
        admitted,
        refusedByCap,
        stranded,
        peerHadRoom,
        refusedDown,
        transfers,
        moved,
        crashes,
        overshoot,
        companyHeadroom(RegionLedger.dayKey(cfg.start())),
        violation,
        tracing ? String.join("\n", trace) : null);
  }

  private void take(Step step) {
    if (step instanceof End e) {
      endCall(e.call());
    } else if (step instanceof CrashAt c) {
      crash(c.region(), c.downMillis(), "scheduled");
    } else if (step instanceof RecoverAt r) {
      recover(r.region());
    } else if (step instanceof Deliver d) {
      deliver(d);
    } else if (step instanceof Tick t) {
      tick(t);
    }
  }

  private int regionOf(Scenario.Call c) {
    return policy == Policy.GLOBAL ? 0 : c.region();
  }

  private static String idOf(Scenario.Call c) {
    return "gw-call-" + c.index();
  }

  private void arrive(Scenario.Call c) {
    int r = regionOf(c);
    CapKey day = RegionLedger.dayKey(at());
    CapKey month = RegionLedger.monthKey(at());
    keys.add(day);
    keys.add(month);
    RegionLedger ledger = ledgers[r];
    if (!ledger.isUp()) {
      refusedDown++;
      trace(() -> "r" + r + " call " + c.index() + " refused: ledger down");
      return;
    }
    ReserveReply reply = ledger.reserve(idOf(c), c.amountMicros(), at());
    if (reply instanceof Reserved) {
      admitted++;
      schedule(now + c.durationMillis(), new End(c));
      trace(() -> "r" + r + " call " + c.index() + " reserved " + usd(c.amountMicros()));
    } else if (reply instanceof Refused refused) {
      refusedByCap++;
      boolean roomElsewhere =
          companyHeadroom(day) >= c.amountMicros() && companyHeadroom(month) >= c.amountMicros();
      if (roomElsewhere) {
        stranded++;
      }
      if (peerHasRoom(r, day, month, c.amountMicros())) {
        peerHadRoom++;
      }
      trace(
          () ->
              "r"
                  + r
                  + " call "
                  + c.index()
                  + " refused by "
                  + refused.cap().wireName()
                  + " allowance (headroom "
                  + usd(refused.headroomMicros())
                  + ")"
                  + (roomElsewhere ? ", company had room: stranded" : ""));
    }
    check();
    if (policy.pulls() || policy == Policy.ADD_FIRST) {
      askIfLow(r);
    }
  }

  /** Whether one other region alone could have admitted the call (it had headroom for it). */
  private boolean peerHasRoom(int r, CapKey day, CapKey month, long amount) {
    for (int p = 0; p < ledgers.length; p++) {
      if (p != r && ledgers[p].headroom(day) >= amount && ledgers[p].headroom(month) >= amount) {
        return true;
      }
    }
    return false;
  }

  /** What one global ledger would still admit in {@code key}'s window: cap − Σ spend. */
  private long companyHeadroom(CapKey key) {
    long spent = 0;
    for (RegionLedger l : ledgers) {
      spent += l.spend(key);
    }
    return split.cap(key) - spent;
  }

  private void endCall(Scenario.Call c) {
    int r = regionOf(c);
    if (!ledgers[r].isUp()) {
      // The gateway keeps the close and sends it again once the ledger is back.
      closesWhileDown.get(r).add(c);
      return;
    }
    ledgers[r].close(idOf(c), c.actualMicros(), c.voided(), at());
    trace(
        () ->
            "r"
                + r
                + " call "
                + c.index()
                + (c.voided() ? " voided" : " settled " + usd(c.actualMicros())));
    check();
  }

  private void crash(int r, long downMillis, String why) {
    if (!ledgers[r].isUp()) {
      return;
    }
    ledgers[r].crash();
    memory[r] = new Memory();
    crashes++;
    trace(() -> "r" + r + " CRASH (" + why + "), down " + downMillis + " ms");
    schedule(now + downMillis, new RecoverAt(r));
  }

  private void recover(int r) {
    boolean same = ledgers[r].recover();
    if (!same) {
      invariant("r" + r + " recovered books differ from the ones before its crash");
    }
    Memory m = memory[r];
    if (policy != Policy.ADD_FIRST) {
      // Which outs were acknowledged was in memory: every out of the journal is sent again, and
      // the destinations answer the ones they applied with an ack and nothing else.
      for (AllowanceOut out : ledgers[r].outs()) {
        m.unacked.put(
            out.transferId(), new Pending(RegionLedger.indexOf(out.toRegion()), new Give(out)));
      }
    }
    trace(
        () ->
            "r"
                + r
                + " RECOVERED from "
                + ledgers[r].journalSize()
                + " journal rows, re-sending "
                + m.unacked.size()
                + " outs");
    ensureResend(r);
    List<Scenario.Call> closes = closesWhileDown.get(r);
    for (int i = 0; i < closes.size(); i++) {
      schedule(now + 1 + i, new End(closes.get(i)));
    }
    closes.clear();
    if (policy == Policy.PUSH || policy == Policy.ADD_FIRST) {
      schedule(now + GOSSIP_EVERY, new Tick(r, TickKind.GOSSIP, m));
    }
  }

  // ----------------------------------------------------------------------------------------------
  // Network
  // ----------------------------------------------------------------------------------------------

  private void send(int from, int to, Message m) {
    if (!sc.linkUp(from, to, now)) {
      trace(() -> "r" + from + "->r" + to + " " + name(m) + " lost: partition");
      return;
    }
    int base = sc.linkMillis()[from][to];
    long latency = Math.min(cfg.maxLinkMillis(), base + net.nextInt(base / 10 + 1));
    schedule(now + latency, new Deliver(from, to, m));
    if (net.nextDouble() < cfg.duplicateChance()) {
      schedule(now + latency + net.nextInt(500), new Deliver(from, to, m));
    }
  }

  private static String name(Message m) {
    if (m instanceof Give g) {
      return "Give(" + g.out().transferId() + ")";
    } else if (m instanceof Ack a) {
      return "Ack(" + a.transferId() + ")";
    } else if (m instanceof Take t) {
      return "Take(" + t.out().transferId() + ")";
    }
    return m.getClass().getSimpleName();
  }

  private void deliver(Deliver d) {
    int to = d.to();
    if (!sc.linkUp(d.from(), to, now) || !ledgers[to].isUp()) {
      trace(() -> "r" + d.from() + "->r" + to + " " + name(d.message()) + " lost in flight");
      return;
    }
    Message m = d.message();
    if (m instanceof Give g) {
      onGive(to, g.out());
    } else if (m instanceof Ack a) {
      memory[to].unacked.remove(a.transferId());
    } else if (m instanceof Ask a) {
      onAsk(to, d.from(), a);
    } else if (m instanceof Gossip g) {
      memory[to].view.put(d.from(), g.headroom());
      memory[to].viewAt.put(d.from(), now);
    } else if (m instanceof Take t) {
      onTake(to, t.out());
    }
  }

  private void onGive(int r, AllowanceOut out) {
    boolean applied = ledgers[r].applyIn(out, at());
    if (applied) {
      if (!outIds.contains(out.transferId())) {
        invariant("transfer " + out.transferId() + " applied in at r" + r + " before any out");
      }
      trace(
          () ->
              "r"
                  + r
                  + " IN "
                  + out.transferId()
                  + " "
                  + out.key().cap().wireName()
                  + " "
                  + usd(out.micros())
                  + " from "
                  + out.fromRegion());
      check();
      if (net.nextDouble() < cfg.crashAfterTransferChance()) {
        crash(r, 5_000 + net.nextInt(25_000), "after journaling an in, before its ack");
        return;
      }
    } else {
      trace(() -> "r" + r + " IN " + out.transferId() + " repeated: ack again, nothing written");
    }
    send(r, RegionLedger.indexOf(out.fromRegion()), new Ack(out.transferId()));
  }

  // ----------------------------------------------------------------------------------------------
  // Rebalancers
  // ----------------------------------------------------------------------------------------------

  private boolean current(CapKey key) {
    return key.equals(RegionLedger.dayKey(at())) || key.equals(RegionLedger.monthKey(at()));
  }

  private long floor(int r, CapKey key) {
    if (policy == Policy.PULL_NO_FLOOR) {
      return 0;
    }
    return (long) (split.share(r, key) * cfg.floorFraction());
  }

  private long rateLeft(int r, CapKey key) {
    long[] w = memory[r].lentThisMinute.computeIfAbsent(key, k -> new long[] {-1, 0});
    long minute = now / 60_000;
    if (w[0] != minute) {
      w[0] = minute;
      w[1] = 0;
    }
    return (long) (split.share(r, key) * cfg.ratePerMinuteFraction()) - w[1];
  }

  private void lendFrom(int lender, int to, CapKey key, long want, String reason) {
    // Down when a forced crash after the previous key's out took the ledger with it.
    if (!current(key) || !ledgers[lender].isUp()) {
      return;
    }
    String tid = "r" + lender + "-" + ledgers[lender].journalSize();
    Optional<AllowanceOut> out =
        ledgers[lender].lend(
            tid, to, key, want, floor(lender, key), rateLeft(lender, key), reason, at());
    if (out.isEmpty()) {
      return;
    }
    AllowanceOut o = out.get();
    memory[lender].lentThisMinute.get(key)[1] += o.micros();
    outIds.add(tid);
    transfers++;
    moved += o.micros();
    trace(
        () ->
            "r"
                + lender
                + " OUT "
                + tid
                + " "
                + key.cap().wireName()
                + " "
                + usd(o.micros())
                + " to r"
                + to
                + " ("
                + reason
                + ")");
    check();
    if (net.nextDouble() < cfg.crashAfterTransferChance()) {
      crash(lender, 5_000 + net.nextInt(25_000), "after journaling an out, before sending it");
      return;
    }
    memory[lender].unacked.put(tid, new Pending(to, new Give(o)));
    send(lender, to, new Give(o));
    ensureResend(lender);
  }

  private void askIfLow(int r) {
    Memory m = memory[r];
    for (CapKey key : List.of(RegionLedger.dayKey(at()), RegionLedger.monthKey(at()))) {
      long share = split.share(r, key);
      long headroom = ledgers[r].headroom(key);
      if (headroom >= share * cfg.lowWaterFraction()
          || now - m.lastAskAt.getOrDefault(key, Long.MIN_VALUE / 2) < ASK_COOLDOWN) {
        continue;
      }
      m.lastAskAt.put(key, now);
      long want = (long) (share * cfg.askFraction()) - headroom;
      if (policy.pulls()) {
        // Each peer is asked for its part: asking all for the whole would move n-1 times the need.
        long part = (want + ledgers.length - 2) / (ledgers.length - 1);
        for (int p = 0; p < ledgers.length; p++) {
          if (p != r) {
            send(r, p, new Ask(key, part));
          }
        }
      } else {
        addFirst(r, key, want);
      }
    }
  }

  private void onAsk(int lender, int asker, Ask a) {
    lendFrom(
        lender,
        asker,
        a.key(),
        a.wantMicros(),
        policy + ": r" + asker + " asked for " + usd(a.wantMicros()));
  }

  private void pushTick(int r) {
    Memory m = memory[r];
    for (CapKey key : List.of(RegionLedger.dayKey(at()), RegionLedger.monthKey(at()))) {
      long mine = ledgers[r].headroom(key);
      long sum = mine;
      int known = 1;
      int needy = -1;
      long needyHeadroom = Long.MAX_VALUE;
      for (int p = 0; p < ledgers.length; p++) {
        Long h =
            p == r || now - m.viewAt.getOrDefault(p, Long.MIN_VALUE / 2) > VIEW_MAX_AGE
                ? null
                : m.view.get(p).get(key);
        if (h == null) {
          continue;
        }
        sum += h;
        known++;
        if (h < needyHeadroom) {
          needyHeadroom = h;
          needy = p;
        }
      }
      long mean = sum / known;
      if (needy >= 0 && needyHeadroom < mean / 2 && mine > mean) {
        lendFrom(
            r,
            needy,
            key,
            (mine - mean) / 2,
            "PUSH: r"
                + needy
                + " gossiped "
                + usd(needyHeadroom)
                + " < half the mean "
                + usd(mean));
      }
    }
  }

  /** The broken order: journal the in here first, then ask the lender to take it out. */
  private void addFirst(int r, CapKey key, long want) {
    if (!ledgers[r].isUp()) {
      return;
    }
    Memory m = memory[r];
    int lender = -1;
    long best = Long.MIN_VALUE;
    for (int p = 0; p < ledgers.length; p++) {
      Map<CapKey, Long> v = m.view.get(p);
      long h = v == null ? 0 : v.getOrDefault(key, 0L);
      if (p != r && h > best) {
        best = h;
        lender = p;
      }
    }
    String tid = "r" + r + "-" + ledgers[r].journalSize();
    AllowanceOut out =
        new AllowanceOut(
            tid,
            RegionLedger.nameOf(lender),
            RegionLedger.nameOf(r),
            key.cap(),
            key.subject(),
            key.window(),
            want,
            "ADD_FIRST",
            null,
            at());
    ledgers[r].applyIn(out, at());
    int from = lender;
    trace(() -> "r" + r + " IN " + tid + " " + usd(want) + " BEFORE r" + from + " took it out");
    if (!outIds.contains(tid)) {
      invariant("transfer " + tid + " applied in at r" + r + " before any out");
    }
    check();
    m.unacked.put(tid, new Pending(lender, new Take(out)));
    send(r, lender, new Take(out));
    ensureResend(r);
  }

  private void onTake(int lender, AllowanceOut out) {
    if (ledgers[lender].takeOutUnchecked(out)) {
      outIds.add(out.transferId());
      transfers++;
      moved += out.micros();
      trace(
          () ->
              "r"
                  + lender
                  + " OUT "
                  + out.transferId()
                  + " "
                  + usd(out.micros())
                  + " (taken after the in)");
      check();
    }
    send(lender, RegionLedger.indexOf(out.toRegion()), new Ack(out.transferId()));
  }

  private void ensureResend(int r) {
    Memory m = memory[r];
    if (!m.resendScheduled && !m.unacked.isEmpty()) {
      m.resendScheduled = true;
      schedule(now + RESEND_EVERY, new Tick(r, TickKind.RESEND, m));
    }
  }

  private void tick(Tick t) {
    int r = t.region();
    boolean up = ledgers[r].isUp();
    long next;
    switch (t.kind()) {
      case EXPIRE -> {
        if (up && ledgers[r].expireDue(at()) > 0) {
          trace(() -> "r" + r + " expired reservations at their worst case");
          check();
        }
        next = EXPIRE_EVERY;
      }
      case GOSSIP -> {
        if (t.owner() != memory[r]) {
          return; // a chain of the memory a crash threw away; the recovery started a new one
        }
        if (!up) {
          return; // restarted by the recovery
        }
        Map<CapKey, Long> h = new LinkedHashMap<>();
        for (CapKey key : List.of(RegionLedger.dayKey(at()), RegionLedger.monthKey(at()))) {
          h.put(key, ledgers[r].headroom(key));
        }
        for (int p = 0; p < ledgers.length; p++) {
          if (p != r) {
            send(r, p, new Gossip(Map.copyOf(h)));
          }
        }
        schedule(now + GOSSIP_EVERY, new Tick(r, TickKind.GOSSIP, memory[r]));
        return;
      }
      case PUSH -> {
        if (up) {
          pushTick(r);
        }
        next = PUSH_EVERY;
      }
      case RESEND -> {
        Memory m = memory[r];
        if (t.owner() != m || !up) {
          return;
        }
        for (Map.Entry<String, Pending> p : m.unacked.entrySet()) {
          send(r, p.getValue().to(), p.getValue().message());
        }
        m.resendScheduled = false;
        ensureResend(r);
        return;
      }
      default -> throw new IllegalStateException();
    }
    if (now + next <= end) {
      schedule(now + next, new Tick(r, t.kind(), null));
    }
  }

  // ----------------------------------------------------------------------------------------------
  // The checker
  // ----------------------------------------------------------------------------------------------

  /**
   * Every company-wide window: Σ spend ≤ cap (else overshoot, and the run stops) and Σ allowance ≤
   * cap (else some allowance exists twice: the transfer order is broken).
   */
  private void check() {
    for (CapKey key : keys) {
      long cap = split.cap(key);
      long spent = 0;
      long allowed = 0;
      for (RegionLedger l : ledgers) {
        spent += l.spend(key);
        allowed += l.allowance(key);
      }
      if (spent > cap) {
        overshoot = Math.max(overshoot, spent - cap);
        overshootViolation =
            "OVERSHOOT of "
                + key.cap().wireName()
                + " "
                + key.window()
                + ": the regions hold "
                + usd(spent)
                + " against a cap of "
                + usd(cap);
        trace(() -> overshootViolation);
        return;
      }
      if (allowed > cap) {
        invariant(
            "allowances of "
                + key.cap().wireName()
                + " "
                + key.window()
                + " sum to "
                + usd(allowed)
                + ", above the cap of "
                + usd(cap));
      }
    }
  }

  private void invariant(String what) {
    if (!what.equals(lastInvariant)) {
      // Once per distinct break: a broken sum stays broken at every check until it is repaired.
      trace(() -> "INVARIANT BROKEN: " + what);
      lastInvariant = what;
    }
    if (invariantViolation == null) {
      invariantViolation = what + " (at " + now + " ms)";
    }
  }

  /** After the drain every transfer taken out must have landed, once: none lost in flight. */
  private void checkEveryOutLanded() {
    for (RegionLedger l : ledgers) {
      for (AllowanceOut out : l.outs()) {
        if (!ledgers[RegionLedger.indexOf(out.toRegion())].appliedIn(out.transferId())) {
          invariant("transfer " + out.transferId() + " still in flight after the drain");
          return;
        }
      }
    }
  }
}

package dev.spendgateway.ledger;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import scala.collection.Iterator;
import scala.collection.immutable.TreeSet;
import scala.collection.immutable.TreeSet$;
import scala.collection.mutable.ReusableBuilder;
import scala.math.Ordering;
import scala.math.Ordering$;

/**
 * The open reservations, by id and by expiry time. Immutable with structural sharing, like {@link
 * PersistentMap}: the by-id map is a hash trie, the expiry index a red-black tree (Scala's
 * immutable {@code TreeSet}, on the classpath through Pekko).
 *
 * <p>Why the index: the ledger looks for expired reservations every {@code
 * ledger.expiry-check-interval}. Scanning every open reservation made that tick O(open) inside the
 * single writer — with 600,000 open it took most of the CPU and stalled reservations for seconds.
 * With the index a tick costs O(log n + expired).
 */
final class OpenReservations {
  /**
   * Expiry order; the id breaks ties so two reservations expiring at once are both kept. The
   * reservations themselves are the index's keys: no key object per reservation, and the index
   * lists them in expiry order without a lookup by id.
   */
  static final Comparator<Reservation> EXPIRY_ORDER =
      Comparator.comparing(Reservation::expiresAt).thenComparing(Reservation::id);

  private static final Ordering<Reservation> BY_EXPIRY =
      Ordering$.MODULE$.comparatorToOrdering(EXPIRY_ORDER);

  private static final OpenReservations EMPTY =
      new OpenReservations(PersistentMap.empty(), TreeSet$.MODULE$.empty(BY_EXPIRY));

  private final PersistentMap<String, Reservation> byId;
  private final TreeSet<Reservation> byExpiry;

  private OpenReservations(PersistentMap<String, Reservation> byId, TreeSet<Reservation> byExpiry) {
    this.byId = byId;
    this.byExpiry = byExpiry;
  }

  static OpenReservations empty() {
    return EMPTY;
  }

  /**
   * The open reservations of a snapshot, built in one pass. Recovery took seconds inserting a
   * quarter of a million reservations one at a time: each insert copied a path of both trees, and
   * in the hash order older snapshots list them every insert into the expiry index missed the cache
   * at each level. Here they are sorted by expiry (snapshots list them in that order, so the sort
   * only checks it; an older snapshot's hash order is sorted once) and each index is built by a
   * builder that fills fresh nodes in place before the value is published.
   */
  static OpenReservations of(List<Reservation> reservations) {
    Reservation[] inExpiryOrder = reservations.toArray(new Reservation[0]);
    Arrays.sort(inExpiryOrder, EXPIRY_ORDER); // TimSort: one comparison each if already in order
    PersistentMap.Builder<String, Reservation> ids = PersistentMap.builder();
    ReusableBuilder<Reservation, TreeSet<Reservation>> expiry =
        TreeSet$.MODULE$.newBuilder(BY_EXPIRY);
    for (Reservation r : inExpiryOrder) {
      ids.put(r.id(), r);
      expiry.addOne(r);
    }
    PersistentMap<String, Reservation> byId = ids.build();
    if (byId.size() != inExpiryOrder.length) {
      // An id listed twice (no snapshot writes that): the later one wins, as one at a time does.
      OpenReservations open = EMPTY;
      for (Reservation r : reservations) {
        open = open.with(r.id(), r);
      }
      return open;
    }
    return new OpenReservations(byId, expiry.result());
  }

  /** The reservation with {@code id} if it is open, or {@code null}. */
  Reservation get(String id) {
    return byId.get(id);
  }

  OpenReservations with(String id, Reservation r) {
    PersistentMap<String, Reservation> added = byId.with(id, r);
    if (added.size() > byId.size()) {
      // A new id (every reservation made): one walk of the trie, no lookup first.
      return new OpenReservations(added, byExpiry.incl(r));
    }
    return new OpenReservations(added, byExpiry.excl(byId.get(id)).incl(r));
  }

  OpenReservations without(String id) {
    Reservation r = byId.get(id);
    return r == null ? this : without(r);
  }

  /** Without {@code r}, which the caller found open here (saves looking it up again). */
  OpenReservations without(Reservation r) {
    return new OpenReservations(byId.without(r.id()), byExpiry.excl(r));
  }

  int size() {
    return byId.size();
  }

  Collection<Reservation> values() {
    return byId.values();
  }

  /**
   * Every open reservation, soonest to expire first: the order a snapshot lists them in, so that
   * {@link #of} finds them sorted.
   */
  List<Reservation> inExpiryOrder() {
    List<Reservation> out = new ArrayList<>(byId.size());
    Iterator<Reservation> it = byExpiry.iterator();
    while (it.hasNext()) {
      out.add(it.next());
    }
    return out;
  }

  Map<String, Reservation> asMap() {
    return byId.asMap();
  }

  /** Open reservations whose timeout has passed at {@code now}, oldest first. */
  List<Reservation> dueBy(Instant now) {
    List<Reservation> due = new ArrayList<>();
    Iterator<Reservation> it = byExpiry.iterator();
    while (it.hasNext()) {
      Reservation r = it.next();
      if (r.expiresAt().isAfter(now)) {
        break;
      }
      due.add(r);
    }
    return due;
  }
}

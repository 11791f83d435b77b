package dev.spendgateway.sim;

import java.util.concurrent.ThreadLocalRandom;

/** Provider-looking random ids ({@code chatcmpl-…}, {@code msg_…}, {@code req_…}). */
final class Ids {
  private static final char[] ALPHABET =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Ids() {}

  static String base62(String prefix, int length) {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    StringBuilder sb = new StringBuilder(prefix.length() + length).append(prefix);
    for (int i = 0; i < length; i++) {
      sb.append(ALPHABET[rnd.nextInt(ALPHABET.length)]);
    }
    return sb.toString();
  }

  static String hex(String prefix, int length) {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    StringBuilder sb = new StringBuilder(prefix.length() + length).append(prefix);
    for (int i = 0; i < length; i++) {
      sb.append(HEX[rnd.nextInt(HEX.length)]);
    }
    return sb.toString();
  }
}

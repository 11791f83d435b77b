package dev.spendgateway.sim;

import java.util.ArrayList;
import java.util.List;

/** Splits reply text into streamed pieces: each word keeps its trailing space, like real deltas. */
final class Words {
  private Words() {}

  static List<String> split(String text) {
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) == ' ') {
        out.add(text.substring(start, i + 1));
        start = i + 1;
      }
    }
    if (start < text.length()) {
      out.add(text.substring(start));
    }
    return out;
  }
}

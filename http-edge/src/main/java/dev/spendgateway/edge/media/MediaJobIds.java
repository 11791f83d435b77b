package dev.spendgateway.edge.media;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The job ids the gateway hands out: the provider's id, the reservation that pays for the job, and
 * a MAC over both. Only an id the gateway made passes {@link #parse}, so only jobs the gateway
 * created are served (any other id is a 404), on every node and after a restart, with nothing
 * stored: the MAC key is derived from the media key, which every node of one gateway shares.
 *
 * <p>Form: {@code <providerId>.<reservationId>.<mac>}; reservation ids and MACs hold no dot, so the
 * provider's id may.
 */
final class MediaJobIds {
  private static final int MAC_HEX = 32;

  private final byte[] key;

  MediaJobIds(String mediaApiKey) {
    this.key = MediaSettings.sha256("gateway media job ids\n" + mediaApiKey);
  }

  /** A job as the gateway names it. */
  record JobRef(String providerId, String reservationId) {}

  String gatewayId(String providerId, String reservationId) {
    return providerId + "." + reservationId + "." + mac(providerId, reservationId);
  }

  Optional<JobRef> parse(String gatewayId) {
    int macDot = gatewayId.lastIndexOf('.');
    if (macDot <= 0) {
      return Optional.empty();
    }
    int idDot = gatewayId.lastIndexOf('.', macDot - 1);
    if (idDot <= 0) {
      return Optional.empty();
    }
    String providerId = gatewayId.substring(0, idDot);
    String reservationId = gatewayId.substring(idDot + 1, macDot);
    String mac = gatewayId.substring(macDot + 1);
    boolean genuine =
        MessageDigest.isEqual(
            mac.getBytes(StandardCharsets.US_ASCII),
            mac(providerId, reservationId).getBytes(StandardCharsets.US_ASCII));
    return genuine ? Optional.of(new JobRef(providerId, reservationId)) : Optional.empty();
  }

  private String mac(String providerId, String reservationId) {
    try {
      Mac hmac = Mac.getInstance("HmacSHA256");
      hmac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] out =
          hmac.doFinal((providerId + "\n" + reservationId).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(out).substring(0, MAC_HEX);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}

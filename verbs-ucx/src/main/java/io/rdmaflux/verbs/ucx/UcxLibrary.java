package io.rdmaflux.verbs.ucx;

import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

/**
 * Whether UCX can run in this JVM, probed once (initialization-on-demand holder) and cached: JUCX
 * loads its JNI library from its jar, which links against the system's {@code libucp.so.0}
 * (Debian/Ubuntu package {@code libucx0}); a missing library surfaces as a {@link LinkageError}
 * (or an exception from JUCX's loader), and a library that loads but cannot open a context as a
 * {@code UcxException}. The probe opens and closes one UCP context with the active-message
 * feature, which is all the provider needs.
 *
 * <p>UCX prints one harmless warning per context when JUCX is newer than the library ("UCP API
 * version is incompatible: required &gt;= 1.18, actual 1.13.1"): JUCX 1.18.1 works with Debian's
 * UCX 1.13.1 for everything this provider calls (verified by the provider TCK over {@code tcp} and
 * {@code sm}).
 *
 * <p><b>Concurrency:</b> thread-safe (class initialization).
 */
public final class UcxLibrary {
    /** What to install when UCX is missing. */
    public static final String INSTALL_HINT =
        "install the system UCX library (Debian/Ubuntu: apt-get install -y libucx0; RHEL: dnf install ucx)";

    private UcxLibrary() {
    }

    /** Why UCX cannot run here, or empty when it can. The first call probes (tens of ms); later calls are free. */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(Holder.REASON);
    }

    /** Whether UCX can run here. */
    public static boolean available() {
        return Holder.REASON == null;
    }

    private static final class Holder {
        static final @Nullable String REASON = probe();

        private static @Nullable String probe() {
            try (UcpContext context = new UcpContext(new UcpParams().requestAmFeature())) {
                return context.getNativeId() == null ? "UCX returned no context" : null;
            } catch (LinkageError e) {
                return "the UCX native library could not be loaded (" + e + "); " + INSTALL_HINT;
            } catch (RuntimeException e) {
                return "UCX could not open a context (" + e + "); " + INSTALL_HINT
                    + ", and check UCX_TLS / UCX_NET_DEVICES if set";
            }
        }
    }
}

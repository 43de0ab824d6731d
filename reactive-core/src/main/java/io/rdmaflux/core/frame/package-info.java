/** Wire format: {@link io.rdmaflux.core.frame.FrameType}, {@link io.rdmaflux.core.frame.FrameHeader} and one codec per frame type. */
@NullMarked
package io.rdmaflux.core.frame;

import org.jspecify.annotations.NullMarked;

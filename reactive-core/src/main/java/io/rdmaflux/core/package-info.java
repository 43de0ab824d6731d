/** rdmaflux reactive core: {@code RdmaNode}, {@code RdmaConnection}, {@code RdmaMessage}, {@code ConnectionSpec} and the {@code RdmaException} hierarchy. */
@NullMarked
package io.rdmaflux.core;

import org.jspecify.annotations.NullMarked;

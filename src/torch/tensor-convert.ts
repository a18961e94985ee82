// The Tensor members that convert dtype and device (x.to(...), x.toDevice(...), x.float(),
// x.pinMemory()): declared on Tensor by module augmentation and attached to its prototype
// (tensor-attach.ts) when the package's index loads.
import type { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { isDType, type DType } from './dtype.js';
import {
  checkDevice,
  cuda,
  parseDevice,
  DeviceUnavailableError,
  SELECT_CUDA_HINT,
  type Device,
  type DeviceLike,
} from './device.js';
import { attachTensorMembers } from './tensor-attach.js';

declare module './tensor.js' {
  interface Tensor {
    /** A dtype (e.g. 'float32') or a device (a Device, or 'cpu', 'cuda', 'cuda:1'). */
    to(target: DType | DeviceLike): Tensor;
    /** The device the tensor lives on (cpu, cuda:0, ...). */
    get device(): Device;
    /**
     * The tensor on `device` (a new handle to the same tensor when it is already there, as
     * PyTorch's to()). nonBlocking copies asynchronously from pinned host memory.
     */
    toDevice(
      device: DeviceLike,
      options?: {
        nonBlocking?: boolean;
        dtype?: DType;
        copy?: boolean;
      },
    ): Tensor;
    /** A copy in page-locked host memory, from which copies to a GPU can be non-blocking. */
    pinMemory(): Tensor;
    get isPinned(): boolean;
    /** Converted to float32. */
    float(): Tensor;
    /** Converted to float64. */
    double(): Tensor;
    /** Converted to int64. */
    long(): Tensor;
    /** Converted to int32. */
    int(): Tensor;
    /** Converted to bool. */
    bool(): Tensor;
  }
}

attachTensorMembers('tensor-convert.ts', {
  to(target: DType | DeviceLike): Tensor {
    if (typeof target === 'string' && isDType(target)) return aten.to_dtype(this, target);
    return this.toDevice(target);
  },
  get device(): Device {
    return parseDevice(native.deviceOf(this.handle));
  },
  toDevice(
    device: DeviceLike,
    options: { nonBlocking?: boolean; dtype?: DType; copy?: boolean } = {},
  ): Tensor {
    return aten.to_device(
      this,
      checkDevice(device).name,
      options.dtype ?? this.dtype,
      options.nonBlocking ?? false,
      options.copy ?? false,
    );
  },
  pinMemory(): Tensor {
    if (!cuda.isAvailable())
      throw new DeviceUnavailableError(
        `pinned host memory needs CUDA, which is not available here; ${SELECT_CUDA_HINT}`,
      );
    return aten.pin_memory(this);
  },
  get isPinned(): boolean {
    return native.isPinned(this.handle);
  },
  float(): Tensor {
    return this.to('float32');
  },
  double(): Tensor {
    return this.to('float64');
  },
  long(): Tensor {
    return this.to('int64');
  },
  int(): Tensor {
    return this.to('int32');
  },
  bool(): Tensor {
    return this.to('bool');
  },
});

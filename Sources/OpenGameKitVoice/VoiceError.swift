/// An error from the voice engine: a ``Code`` and a sentence naming what was wrong and what is allowed.
public struct VoiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// An argument was out of range (bitrate, frame length, sample rate…); the message names the allowed range.
        case invalidArgument
        /// A voice packet or Opus packet could not be parsed.
        case malformedPacket
        /// A C library (Opus, SpeexDSP) refused an operation.
        case codecFailure
        /// An audio file or stream is not in a format the engine reads (PCM16 WAV).
        case unsupportedFormat
        /// Reading or writing a file or pipe failed.
        case ioFailure
        /// No audio device: PulseAudio/PipeWire is not reachable, or the device does not exist.
        case deviceUnavailable
    }

    /// What went wrong.
    public var code: Code
    /// A sentence describing the problem.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

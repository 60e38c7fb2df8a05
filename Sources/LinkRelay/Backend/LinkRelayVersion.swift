/// LinkRelay's version, as adapters name it to providers (in a `User-Agent`, for example).
@_spi(Backend) public enum LinkRelayVersion {
    /// The released version this source belongs to.
    public static let string = "0.6.0"
}

import ArgumentParser

/// The codecs `--format` accepts.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    case flac

    /// The format an output path's extension names, if any.
    init?(pathExtensionOf path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        self.init(rawValue: path[path.index(after: dot)...].lowercased())
    }
}

"""Object keys exactly as the reference names them:
``topics.dir/topic/encodedPartition/topic+partition+startOffset.ext``.

The Block-GZIP S3 sink (spredfast) names its objects ``<s3.prefix>/<upload date>/<topic>-<partition
%05d>-<offset %012d>.gz``: the same parts without the topic directory, with a padded partition
(``topic_directory=False``, ``partition_width=5``; see ``block_gzip_sink_config``)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ObjectNaming:
    topics_dir: str = "topics"
    directory_delim: str = "/"
    file_delim: str = "+"
    zero_pad_width: int = 10
    partition_width: int = 0  # digits of the Kafka partition in file names (0: as is)
    topic_directory: bool = True  # a directory per topic above the encoded partition

    def partitioned_path(self, topic: str, encoded_partition: str) -> str:
        if not self.topic_directory:
            return encoded_partition
        return f"{topic}{self.directory_delim}{encoded_partition}"

    def partition_name(self, kafka_partition: int) -> str:
        return f"{kafka_partition:0{self.partition_width}d}" if self.partition_width else str(kafka_partition)

    def file_name(self, topic: str, kafka_partition: int, start_offset: int, extension: str) -> str:
        # Java's "%0{w}d" pads and never truncates longer offsets; Python's format spec does the same.
        offset = f"{start_offset:0{self.zero_pad_width}d}"
        return f"{topic}{self.file_delim}{self.partition_name(kafka_partition)}{self.file_delim}{offset}{extension}"

    def object_key(
        self, topic: str, encoded_partition: str, kafka_partition: int, start_offset: int, extension: str
    ) -> str:
        directory = self.partitioned_path(topic, encoded_partition)
        name = self.file_name(topic, kafka_partition, start_offset, extension)
        # A blank topics.dir means no leading segment and no leading delimiter.
        if self.topics_dir.strip():
            return f"{self.topics_dir}{self.directory_delim}{directory}{self.directory_delim}{name}"
        return f"{directory}{self.directory_delim}{name}"

    # -- reading keys back: which topic-partition and offset an object key names --

    def topic_prefix(self, topic: str) -> str:
        """The key prefix holding every object of ``topic`` (all encoded partitions; without a topic
        directory, every object under ``topics.dir``)."""
        directory = f"{topic}{self.directory_delim}" if self.topic_directory else ""
        if self.topics_dir.strip():
            return f"{self.topics_dir}{self.directory_delim}{directory}"
        return directory

    def _name_match(self, key: str, topic: str, partition: int) -> re.Match | None:
        name = re.escape(f"{topic}{self.file_delim}{self.partition_name(partition)}{self.file_delim}")
        delim = re.escape(self.directory_delim)
        return re.search(rf"(?:^|(?<={delim})){name}(\d+)\.[^/]*$", key)

    def start_offset_in(self, key: str, topic: str, partition: int) -> int | None:
        """The start offset in an object key of this topic-partition, or None for any other key."""
        match = self._name_match(key, topic, partition)
        return int(match.group(1)) if match else None

    def object_prefix(self, key: str, topic: str, partition: int) -> str | None:
        """The key up to its offset (the object's directory and ``<topic>+<partition>+``), or None for a
        key that is not this topic-partition's: listing it lists this topic-partition's objects in that
        directory."""
        match = self._name_match(key, topic, partition)
        return key[: match.start(1)] if match else None

    def listing_from(self, prefix: str, offset: int) -> str:
        """A ListObjectsV2 StartAfter under ``prefix`` that skips names of offsets below ``offset`` and none
        at or above it. Offsets are zero-padded to a width, so names of one width sort by offset; a longer
        offset (past the padding) starts with a non-zero digit and may sort before the padded resume
        offset, so the bound is the smaller of the two."""
        padded = f"{offset:0{self.zero_pad_width}d}"
        smallest_longer = "1" + "0" * len(padded)
        return prefix + min(padded, smallest_longer)

    @classmethod
    def from_config(cls, config) -> ObjectNaming:
        block_gzip_sink = getattr(config, "block_gzip_sink", None) is not None
        return cls(
            topics_dir=config["topics.dir"],
            directory_delim=config["directory.delim"],
            file_delim=config["file.delim"],
            zero_pad_width=config["filename.offset.zero.pad.width"],
            partition_width=5 if block_gzip_sink else 0,
            topic_directory=not block_gzip_sink,
        )

package main

import (
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go/aws"
	"github.com/aws/aws-sdk-go/aws/awserr"
	"github.com/aws/aws-sdk-go/aws/session"
	"github.com/aws/aws-sdk-go/service/sns"
	"github.com/aws/aws-sdk-go/service/sqs"
)

// walkV1 is the short walk through SDK v1 (in maintenance, but still in many programs): a queue's send, receive
// and delete, then a topic delivering raw into a queue through a filter policy, and its envelope.
func walkV1(endpoint, prefix string) {
	sess, err := session.NewSession(&aws.Config{Endpoint: aws.String(endpoint)})
	must(err, "v1 NewSession")
	sqsClient, snsClient := sqs.New(sess), sns.New(sess)

	created, err := sqsClient.CreateQueue(&sqs.CreateQueueInput{QueueName: aws.String(prefix + "-orders")})
	must(err, "v1 CreateQueue")
	queueURL := created.QueueUrl
	sent, err := sqsClient.SendMessage(&sqs.SendMessageInput{
		QueueUrl:    queueURL,
		MessageBody: aws.String("v1 order \u00e9"),
		MessageAttributes: map[string]*sqs.MessageAttributeValue{
			"kind": {DataType: aws.String("String"), StringValue: aws.String("order")},
		},
	})
	must(err, "v1 SendMessage")
	received, err := sqsClient.ReceiveMessage(&sqs.ReceiveMessageInput{
		QueueUrl: queueURL, MaxNumberOfMessages: aws.Int64(10), WaitTimeSeconds: aws.Int64(1),
		MessageAttributeNames: aws.StringSlice([]string{"All"}),
	})
	must(err, "v1 ReceiveMessage")
	expectEqual("v1 ReceiveMessage count", len(received.Messages), 1)
	message := received.Messages[0]
	expectEqual("v1 ReceiveMessage MessageId", aws.StringValue(message.MessageId), aws.StringValue(sent.MessageId))
	expectEqual("v1 ReceiveMessage Body", aws.StringValue(message.Body), "v1 order \u00e9")
	expectEqual("v1 ReceiveMessage kind attribute", aws.StringValue(message.MessageAttributes["kind"].StringValue), "order")
	_, err = sqsClient.DeleteMessage(&sqs.DeleteMessageInput{QueueUrl: queueURL, ReceiptHandle: message.ReceiptHandle})
	must(err, "v1 DeleteMessage")
	ok("v1 CreateQueue, SendMessage, ReceiveMessage, DeleteMessage on %s", aws.StringValue(queueURL))
	_, err = sqsClient.GetQueueUrl(&sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-missing")})
	expectEqual("v1 GetQueueUrl of a missing queue: error code", awsErrorCode(err), sqs.ErrCodeQueueDoesNotExist)

	topic, err := snsClient.CreateTopic(&sns.CreateTopicInput{Name: aws.String(prefix + "-events")})
	must(err, "v1 CreateTopic")
	attributes, err := sqsClient.GetQueueAttributes(&sqs.GetQueueAttributesInput{
		QueueUrl: queueURL, AttributeNames: aws.StringSlice([]string{"QueueArn"}),
	})
	must(err, "v1 GetQueueAttributes")
	_, err = snsClient.Subscribe(&sns.SubscribeInput{
		TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: attributes.Attributes["QueueArn"],
		Attributes: aws.StringMap(map[string]string{"FilterPolicy": `{"kind":["order"]}`}),
	})
	must(err, "v1 Subscribe")
	for _, kind := range []string{"refund", "order"} {
		_, err = snsClient.Publish(&sns.PublishInput{
			TopicArn: topic.TopicArn, Message: aws.String("v1 " + kind),
			MessageAttributes: map[string]*sns.MessageAttributeValue{
				"kind": {DataType: aws.String("String"), StringValue: aws.String(kind)},
			},
		})
		must(err, "v1 Publish")
	}
	received, err = sqsClient.ReceiveMessage(&sqs.ReceiveMessageInput{
		QueueUrl: queueURL, MaxNumberOfMessages: aws.Int64(10), WaitTimeSeconds: aws.Int64(1),
	})
	must(err, "v1 ReceiveMessage of the notification")
	expectEqual("v1 notifications received (the refund filtered out)", len(received.Messages), 1)
	var envelope map[string]any
	must(json.Unmarshal([]byte(aws.StringValue(received.Messages[0].Body)), &envelope), "v1 parsing the envelope")
	expectEqual("v1 envelope Message", envelope["Message"], any("v1 order"))
	expectEqual("v1 envelope TopicArn", envelope["TopicArn"], any(aws.StringValue(topic.TopicArn)))
	verifyEnvelope(envelope)
	ok("v1 CreateTopic, Subscribe with a filter policy, Publish x2: one envelope delivered, %s", envelope["MessageId"])

	_, err = snsClient.DeleteTopic(&sns.DeleteTopicInput{TopicArn: topic.TopicArn})
	must(err, "v1 DeleteTopic")
	_, gone := snsClient.GetTopicAttributes(&sns.GetTopicAttributesInput{TopicArn: topic.TopicArn})
	expectEqual("v1 GetTopicAttributes of the deleted topic: error code", awsErrorCode(gone), sns.ErrCodeNotFoundException)
	ok("v1 DeleteTopic; the topic is gone: %s", strings.SplitN(gone.Error(), "\n", 2)[0])
	_, err = sqsClient.DeleteQueue(&sqs.DeleteQueueInput{QueueUrl: queueURL})
	must(err, "v1 DeleteQueue")
}

func awsErrorCode(err error) string {
	if awsError, isAWS := err.(awserr.Error); isAWS {
		return awsError.Code()
	}
	return ""
}
